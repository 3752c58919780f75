// Sends N GenAI client spans through the real OpenTelemetry JS SDK (BatchSpanProcessor + the
// OTLP/HTTP exporter) to spillway's OTLP receiver, then prints one JSON line: what the SDK
// exported and how each export ended. Used by tests/auto/live/tst_otlp_receiver.cpp.
//
//   node send-spans.js URL json|proto N [TOKEN]
//
// Span i: chat on model "chat-72b" at 127.0.0.1:(18000 + i % 3), input tokens i, output tokens
// 2 i, start 1700000000 s + i ms, duration 100 + i ms; every 10th fails with error.type
// "timeout" and status ERROR; every 7th answers HTTP 503. One extra span is not a GenAI call
// (the receiver reports it in partialSuccess).
'use strict';

const { SpanKind, SpanStatusCode } = require('@opentelemetry/api');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BasicTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { ExportResultCode } = require('@opentelemetry/core');

const [url, protocol, countText, token] = process.argv.slice(2);
const count = Number(countText);
if (!url || !['json', 'proto'].includes(protocol) || !(count > 0)) {
  console.error('usage: node send-spans.js URL json|proto N [TOKEN]');
  process.exit(2);
}
const { OTLPTraceExporter } =
  protocol === 'json'
    ? require('@opentelemetry/exporter-trace-otlp-http')
    : require('@opentelemetry/exporter-trace-otlp-proto');

const exporter = new OTLPTraceExporter({
  url,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
  timeoutMillis: 10000,
});

// Counts what the SDK hands the exporter and how each export ends.
const tally = { exportedSpans: 0, exports: 0, failed: 0, errors: [] };
const counting = {
  export(spans, done) {
    exporter.export(spans, (result) => {
      tally.exports += 1;
      if (result.code === ExportResultCode.SUCCESS) {
        tally.exportedSpans += spans.length;
      } else {
        tally.failed += spans.length;
        tally.errors.push(String(result.error && result.error.message));
      }
      done(result);
    });
  },
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush(),
};

const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'peer-otel' }),
  spanProcessors: [
    new BatchSpanProcessor(counting, {
      maxExportBatchSize: 128,
      maxQueueSize: count + 16,
      scheduledDelayMillis: 50,
    }),
  ],
});
const tracer = provider.getTracer('spillway-peer', '1.0.0');

const base = 1700000000000; // ms since the epoch
for (let i = 0; i < count; i++) {
  const attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'chat-72b',
    'server.address': '127.0.0.1',
    'server.port': 18000 + (i % 3),
    'gen_ai.usage.input_tokens': i,
    'gen_ai.usage.output_tokens': 2 * i,
    'gen_ai.conversation.id': `conv-${i}`,
  };
  if (i % 7 === 0) attributes['http.response.status_code'] = 503;
  const span = tracer.startSpan('chat chat-72b', {
    kind: SpanKind.CLIENT,
    attributes,
    startTime: base + i,
  });
  if (i % 10 === 0) {
    span.setAttribute('error.type', 'timeout');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream timed out' });
  }
  span.end(base + i + 100 + i);
}
tracer.startSpan('GET /health', { startTime: base }).end(base + 1);

provider
  .forceFlush()
  .then(() => provider.shutdown())
  .then(() => {
    console.log(JSON.stringify(tally));
    process.exit(tally.failed ? 1 : 0);
  })
  .catch((e) => {
    console.log(JSON.stringify({ ...tally, fatal: String(e) }));
    process.exit(1);
  });
