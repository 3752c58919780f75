// Sample inputs for tst_formats, in their own translation unit: moc cannot read raw string
// literals holding JSON, so they stay out of the file that declares the test class.
#include "tst_formats_samples.hpp"

namespace {

// nginx, as written by
//   log_format spillway escape=json '{"msec":"$msec","request_time":"$request_time",'
//     '"status":"$status","upstream_addr":"$upstream_addr","upstream_status":"$upstream_status",'
//     '"upstream_response_time":"$upstream_response_time","model":"$http_x_model"}';
// escape=json logs an unset variable as "" (not "-"); retries separate entries with ", ",
// internal redirects to another upstream group with " : ".
const char* kNginx =
    R"({"msec":"1764480000.500","request_time":"0.500","status":"200","upstream_addr":"10.0.0.1:8000","upstream_status":"200","upstream_response_time":"0.498","model":"chat-72b"}
{"msec":"1764480010.700","request_time":"1.700","status":"200","upstream_addr":"10.0.0.1:8000, 10.0.0.2:8000","upstream_status":"502, 200","upstream_response_time":"0.500, 1.200","model":""}
{"msec":"1764480011.000","request_time":"0.000","status":"404","upstream_addr":"","upstream_status":"","upstream_response_time":"","model":""}
{"msec":"1764480100.201","request_time":"60.101","status":"200","upstream_addr":"10.0.0.1:8000 : 10.0.0.3:8000","upstream_status":"504 : 200","upstream_response_time":"60.001 : 0.100","model":"chat-72b"}
)";

// Envoy Gateway's default JSON access log keys.
const char* kEnvoy =
    R"({"start_time":"2025-11-30T05:20:00.000Z","method":"POST","x-envoy-origin-path":"/v1/chat/completions","protocol":"HTTP/1.1","response_code":200,"response_flags":"-","response_code_details":"via_upstream","bytes_received":512,"bytes_sent":2048,"duration":850,"x-envoy-upstream-service-time":"848","upstream_host":"10.0.0.5:8000","upstream_cluster":"chat"}
{"start_time":"2025-11-30T05:20:01.000Z","method":"POST","response_code":504,"response_flags":"UT","duration":15000,"upstream_host":"10.0.0.6:8000","upstream_cluster":"chat"}
{"start_time":"2025-11-30T05:20:02.000Z","method":"POST","response_code":503,"response_flags":"UH","duration":0,"upstream_host":null,"upstream_cluster":"chat"}
{"start_time":"2025-11-30T05:20:03.000Z","method":"POST","response_code":0,"response_flags":"UC","duration":"120","upstream_host":"10.0.0.5:8000"}
)";

// HAProxy, as written by the export's log-format (exporter::haproxyLogFormat): a call on a fresh
// connection; the next on the same connection after 300 ms idle (its accept date is the end of
// the one before); a server timeout before the headers; a server that closed during the body;
// a refused connection; a request HAProxy could not parse and one with no server up (no
// server: ignored).
const char* kHaproxy =
    R"({"accept_ms":1764480000000,"Th":0,"Ti":0,"TR":0,"Tw":0,"Tc":1,"Tr":48,"Ta":50,"server":"chat-1","backend":"chat","status":200,"termination":"--"}
{"accept_ms":1764480000050,"Th":0,"Ti":300,"TR":0,"Tw":0,"Tc":0,"Tr":20,"Ta":21,"server":"chat-2","backend":"chat","status":200,"termination":"--"}
{"accept_ms":1764480001000,"Th":2,"Ti":5,"TR":0,"Tw":0,"Tc":0,"Tr":-1,"Ta":10000,"server":"chat-3","backend":"chat","status":504,"termination":"sH"}
{"accept_ms":1764480002000,"Th":0,"Ti":0,"TR":0,"Tw":0,"Tc":0,"Tr":30,"Ta":900,"server":"chat-1","backend":"chat","status":200,"termination":"SD"}
{"accept_ms":1764480003000,"Th":0,"Ti":0,"TR":0,"Tw":0,"Tc":-1,"Tr":-1,"Ta":3001,"server":"chat-3","backend":"chat","status":503,"termination":"SC"}
{"accept_ms":1764480004000,"Th":0,"Ti":0,"TR":-1,"Tw":-1,"Tc":-1,"Tr":-1,"Ta":0,"server":"<NOSRV>","backend":"fe","status":400,"termination":"PR"}
{"accept_ms":1764480005000,"Th":0,"Ti":0,"TR":0,"Tw":0,"Tc":-1,"Tr":-1,"Ta":0,"server":"<NOSRV>","backend":"chat","status":503,"termination":"SC"}
)";

const char* kOtlp = R"({"resourceSpans":[{
  "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"order-assistant"}}]},
  "scopeSpans":[{"scope":{"name":"opentelemetry.instrumentation.openai"},"spans":[
    {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"chat chat-72b",
     "kind":3,"startTimeUnixNano":"1764480001000000000","endTimeUnixNano":"1764480001250000000",
     "attributes":[
       {"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},
       {"key":"gen_ai.provider.name","value":{"stringValue":"openai"}},
       {"key":"gen_ai.request.model","value":{"stringValue":"chat-72b"}},
       {"key":"server.address","value":{"stringValue":"gpu-a.internal"}},
       {"key":"server.port","value":{"intValue":"8000"}},
       {"key":"http.response.status_code","value":{"intValue":"200"}},
       {"key":"gen_ai.usage.input_tokens","value":{"intValue":"120"}},
       {"key":"gen_ai.usage.output_tokens","value":{"intValue":42}}],
     "status":{}},
    {"traceId":"5b8efff798038103d269b633813fc60c","spanId":"aaa19b7ec3c1b174","name":"GET /health",
     "kind":2,"startTimeUnixNano":"1764480000500000000","endTimeUnixNano":"1764480000510000000",
     "attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}}]},
    {"traceId":"6b8efff798038103d269b633813fc60c","spanId":"bbb19b7ec3c1b174","name":"chat chat-72b",
     "kind":3,"startTimeUnixNano":1764480000000000000,"endTimeUnixNano":"1764480030000000000",
     "attributes":[
       {"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},
       {"key":"gen_ai.request.model","value":{"stringValue":"chat-72b"}},
       {"key":"server.address","value":{"stringValue":"gpu-b.internal"}},
       {"key":"error.type","value":{"stringValue":"timeout"}}],
     "status":{"code":2,"message":"deadline exceeded"}}
  ]}]}]}
)";

const char* kProm = R"({"status":"success","data":{"resultType":"matrix","result":[
 {"metric":{"__name__":"calls","instance":"gpu-1","model":"chat"},"values":[[1764480015,"120"],[1764480030,"118"]]},
 {"metric":{"__name__":"failures","instance":"gpu-1","model":"chat"},"values":[[1764480015,"0"],[1764480030,"60.5"]]},
 {"metric":{"__name__":"calls","instance":"gpu-2","model":"chat"},"values":[[1764480015,"100"],[1764480030,"NaN"]]}
]}})";

std::string simplified(const char* s) {  // one line, like QString::simplified
  std::string out;
  bool space = false;
  for (const char* p = s; *p; ++p) {
    const bool ws = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
    if (ws) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(*p);
  }
  return out;
}

}  // namespace

std::vector<ImporterCase> importerCases() {
  std::vector<ImporterCase> r;

  r.push_back(
      {"nginx retries and redirects", "nginx", kNginx, "",
       R"({"ts":1764480000000,"instance":"10.0.0.1:8000","model":"chat-72b","latency_ms":498,"status":200,"outcome":"ok"}
{"ts":1764480009000,"instance":"10.0.0.1:8000","latency_ms":500,"status":502,"outcome":"ok"}
{"ts":1764480009500,"instance":"10.0.0.2:8000","latency_ms":1200,"status":200,"outcome":"ok"}
{"ts":1764480040100,"instance":"10.0.0.1:8000","model":"chat-72b","latency_ms":60001,"status":504,"outcome":"ok"}
{"ts":1764480100101,"instance":"10.0.0.3:8000","model":"chat-72b","latency_ms":100,"status":200,"outcome":"ok"}
)",
       1});
  r.push_back(
      {"nginx numbers unquoted, custom keys", "nginx",
       R"({"t":1764480000.5,"rt":0.5,"status":200,"up":"10.0.0.1:8000","ups":200,"urt":"0.250"})",
       "time=t,request_time=rt,upstream_addr=up,upstream_status=ups,upstream_response_time=urt",
       R"({"ts":1764480000000,"instance":"10.0.0.1:8000","latency_ms":250,"status":200,"outcome":"ok"}
)",
       0});
  r.push_back(
      {"envoy gateway default keys", "envoy", kEnvoy, "",
       R"({"ts":1764480000000,"instance":"10.0.0.5:8000","latency_ms":850,"status":200,"outcome":"ok"}
{"ts":1764480001000,"instance":"10.0.0.6:8000","latency_ms":15000,"status":504,"outcome":"timeout"}
{"ts":1764480003000,"instance":"10.0.0.5:8000","latency_ms":120,"status":0,"outcome":"reset"}
)",
       1});
  r.push_back(
      {"haproxy export log-format", "haproxy", kHaproxy, "",
       R"({"ts":1764480000000,"instance":"chat-1","model":"chat","latency_ms":50,"status":200,"outcome":"ok","ttfb_ms":49}
{"ts":1764480000350,"instance":"chat-2","model":"chat","latency_ms":21,"status":200,"outcome":"ok","ttfb_ms":20}
{"ts":1764480001007,"instance":"chat-3","model":"chat","latency_ms":10000,"status":504,"outcome":"timeout"}
{"ts":1764480002000,"instance":"chat-1","model":"chat","latency_ms":900,"status":200,"outcome":"reset","ttfb_ms":30}
{"ts":1764480003000,"instance":"chat-3","model":"chat","latency_ms":3001,"status":503,"outcome":"error"}
)",
       2});
  r.push_back(
      {"envoy mapped keys", "envoy",
       R"({"ts":"2025-11-30T05:20:00.000Z","host":"h1","code":"200","dur":"12","x-model":"m"})",
       "start_time=ts,upstream_host=host,response_code=code,duration=dur,model=x-model",
       R"({"ts":1764480000000,"instance":"h1","model":"m","latency_ms":12,"status":200,"outcome":"ok"}
)",
       0});
  r.push_back(
      {"csv mapped, quoted, multi-line", "csv",
       "time,host,lat,code,tenant,critical,note\r\n"
       "2025-11-30T05:20:00.250Z,gpu-1,12.5,200,\"acme, \"\"inc\"\"\",true,x\r\n"
       "\r\n"
       "1764480001000,gpu-2,3000,0,,,\"multi\nline note\"\n",
       "ts=time,instance=host,latency_ms=lat,status=code",
       R"({"ts":1764480000250,"instance":"gpu-1","latency_ms":12.5,"status":200,"outcome":"ok","tenant":"acme, \"inc\"","critical":true}
{"ts":1764480001000,"instance":"gpu-2","latency_ms":3000,"status":0,"outcome":"error"}
)",
       0});
  // The quote scan that decides when a record spans lines: a quoted field reopened after a
  // closed one on the same line, "" at a line's end, a quote inside an unquoted cell (text)
  // and commas inside quotes over three lines.
  r.push_back({"csv quotes across lines", "csv",
               "ts,instance,latency_ms,status,note,other\n"
               "1764480000000,\"a\"\"b\",1,200,\"x\"\"\n,\n\"\"y, z\",w\n"
               "1764480001000,c\"d,2,200,\"p\",\"q\nr\"\n",
               "",
               R"({"ts":1764480000000,"instance":"a\"b","latency_ms":1,"status":200,"outcome":"ok"}
{"ts":1764480001000,"instance":"c\"d","latency_ms":2,"status":200,"outcome":"ok"}
)",
               0});
  r.push_back(
      {"csv with ttfb", "csv",
       "ts,instance,latency_ms,status,ttfb_ms\n1764480000000,a,50,200,12.5\n"
       "1764480001000,a,60,200,\n",
       "",
       R"({"ts":1764480000000,"instance":"a","latency_ms":50,"status":200,"outcome":"ok","ttfb_ms":12.5}
{"ts":1764480001000,"instance":"a","latency_ms":60,"status":200,"outcome":"ok"}
)",
       0});
  r.push_back(
      {"otlp genai spans", "otlp", kOtlp, "",
       R"({"ts":1764480000000,"instance":"gpu-b.internal","model":"chat-72b","latency_ms":30000,"status":0,"outcome":"timeout","tenant":"order-assistant"}
{"ts":1764480001000,"instance":"gpu-a.internal:8000","model":"chat-72b","latency_ms":250,"status":200,"outcome":"ok","tenant":"order-assistant","tokens_in":120,"tokens_out":42}
)",
       1});
  std::string otlpLines = simplified(kOtlp);
  otlpLines = otlpLines + "\n" + otlpLines + "\n";
  r.push_back(
      {"otlp one request per line (collector file exporter)", "otlp", otlpLines, "",
       R"({"ts":1764480000000,"instance":"gpu-b.internal","model":"chat-72b","latency_ms":30000,"status":0,"outcome":"timeout","tenant":"order-assistant"}
{"ts":1764480000000,"instance":"gpu-b.internal","model":"chat-72b","latency_ms":30000,"status":0,"outcome":"timeout","tenant":"order-assistant"}
{"ts":1764480001000,"instance":"gpu-a.internal:8000","model":"chat-72b","latency_ms":250,"status":200,"outcome":"ok","tenant":"order-assistant","tokens_in":120,"tokens_out":42}
{"ts":1764480001000,"instance":"gpu-a.internal:8000","model":"chat-72b","latency_ms":250,"status":200,"outcome":"ok","tenant":"order-assistant","tokens_in":120,"tokens_out":42}
)",
       2});
  r.push_back(
      {"prometheus matrix", "prometheus", kProm, "",
       R"({"end":1764480015000,"step_ms":15000,"instance":"gpu-1","model":"chat","calls":120,"failures":0}
{"end":1764480015000,"step_ms":0,"instance":"gpu-2","model":"chat","calls":100,"failures":0}
{"end":1764480030000,"step_ms":15000,"instance":"gpu-1","model":"chat","calls":118,"failures":61}
)",
       0});
  // Keys in any order (status last, values before metric); a key or label named twice counts
  // at its first; points out of time order, repeated (they add up) or NaN (none).
  r.push_back(
      {"prometheus keys in any order", "prometheus",
       R"({"data":{"result":[{"values":[[30,"5"],[15,"2"],[45,"NaN"],[15,"3"]],"metric":{"instance":"b","__name__":"calls","instance":"ignored"}},{"metric":{"__name__":"failures","instance":"b"},"values":[[15,"1"]]},{"metric":{"__name__":"calls","instance":"a"},"values":[[15,"1"],[45,"7"]],"values":[[15,"100"]]},{"metric":{"__name__":"calls","instance":"b"},"values":[[30,"1"]]}],"resultType":"matrix"},"status":"success"})",
       "",
       R"({"end":15000,"step_ms":30000,"instance":"a","calls":1,"failures":0}
{"end":15000,"step_ms":15000,"instance":"b","calls":5,"failures":1}
{"end":30000,"step_ms":15000,"instance":"b","calls":6,"failures":0}
{"end":45000,"step_ms":30000,"instance":"a","calls":7,"failures":0}
)",
       0});

  return r;
}

// Every importer takes instants from 1970 to the end of 9999 only: earlier or later is a unit
// mistake or damage, and stretched a replay over millennia.
void outOfRangeTimes(std::vector<BadCase>& r) {
  const std::string range = "from 1970-01-01 to 9999-12-31";
  r.push_back({"nginx msec before 1970", "nginx",
               R"({"msec":"-5","upstream_addr":"a:1","upstream_status":"200"})", "",
               "f.log:1: msec: expected epoch seconds ($msec) or an RFC 3339 time, " + range, 0,
               1});
  r.push_back({"nginx request longer than the epoch", "nginx",
               R"({"msec":"1.5","request_time":"5","upstream_addr":"a:1","upstream_status":"200"})",
               "", "f.log:1: request_time: longer than the time since 1970 ($msec minus it)", 0,
               1});
  r.push_back({"envoy start in year 33658", "envoy",
               R"({"start_time":"1e15","upstream_host":"h","response_code":200,"duration":1})", "",
               "f.log:1: start_time: expected an RFC 3339 time or epoch seconds/ms, " + range, 0,
               1});
  r.push_back({"haproxy accept before 1970", "haproxy",
               R"({"accept_ms":-1,"Ta":5,"server":"s1","status":200})", "",
               "f.log:1: accept_ms: expected epoch milliseconds " + range + ", got '-1'", 0, 1});
  r.push_back({"csv ts year 10000", "csv",
               "ts,instance,latency_ms,status\n253402300800000,a,1,200\n", "",
               "f.log:2: ts: expected epoch milliseconds or an RFC 3339 time " + range +
                   ", got '253402300800000'",
               0, 1});
  r.push_back(
      {"prometheus step before 1970", "prometheus",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"calls","instance":"a"},"values":[[-60,"1"]]}]}})",
       "", "f.log:1: data.result[0].values[0]: timestamp out of range: not " + range, 0, 1});
}

std::vector<BadCase> badCases() {
  std::vector<BadCase> r;

  const std::string ok =
      R"({"msec":"1764480000.500","request_time":"0.5","upstream_addr":"a:1","upstream_status":"200","upstream_response_time":"0.5"})";
  r.push_back({"nginx broken JSON", "nginx", ok + "\n{\"msec\":\n" + ok, "",
               "f.log:2: invalid JSON: The JSON document has an improper structure: missing or "
               "superfluous commas, braces, missing keys, etc.",
               2, 1});
  r.push_back(
      {"nginx retry lists differ", "nginx",
       R"({"msec":"1764480000.500","upstream_addr":"a:1, b:1","upstream_status":"502","upstream_response_time":"0.1, 0.2"})",
       "", "f.log:1: upstream_status: 1 entries for 2 upstream addresses", 0, 1});
  r.push_back(
      {"nginx bad response time", "nginx",
       ok + "\n" +
           R"({"msec":"1764480000.500","upstream_addr":"a:1","upstream_status":"200","upstream_response_time":"fast"})",
       "", "f.log:2: upstream_response_time: expected seconds, got 'fast'", 1, 1});
  r.push_back({"nginx missing time", "nginx", R"({"upstream_addr":"a:1","upstream_status":"200"})",
               "", "f.log:1: msec: missing required field", 0, 1});
  r.push_back({"envoy missing start", "envoy",
               R"({"upstream_host":"h","response_code":200,"duration":1})", "",
               "f.log:1: start_time: missing required field", 0, 1});
  r.push_back({"envoy bad code (mapped key named)", "envoy",
               R"({"ts":"2025-11-30T05:20:00Z","upstream_host":"h","code":"abc","duration":1})",
               "start_time=ts,response_code=code",
               "f.log:1: code: expected an HTTP status, got 'abc'", 0, 1});
  r.push_back({"haproxy without the active time", "haproxy",
               R"({"accept_ms":1764480000000,"Ti":0,"server":"s1","status":200})", "",
               "f.log:1: Ta: missing required field", 0, 1});
  r.push_back(
      {"haproxy idle time not a number (mapped key named)", "haproxy",
       std::string(R"({"accept_ms":1764480000000,"Ti":0,"Ta":5,"server":"s1","status":200})") +
           "\n" + R"({"accept_ms":1764480000000,"idle":"soon","Ta":5,"server":"s1","status":200})",
       "idle=idle", "f.log:2: idle: expected milliseconds, got 'soon'", 1, 1});
  r.push_back({"csv bad latency", "csv",
               "ts,instance,latency_ms,status\n1764480000000,a,1,200\n1764480000000,a,x,200\n", "",
               "f.log:3: latency_ms: expected milliseconds >= 0, got 'x'", 1, 1});
  // Rows were read whatever their width: extra cells ignored, missing ones taken as empty.
  r.push_back({"csv row wider than the header", "csv",
               "ts,instance,latency_ms,status\n1764480000000,a,1,200\n"
               "1764480000000,gpu,2,1,200\n",
               "", "f.log:3: 5 cells where the header has 4", 1, 1});
  r.push_back({"csv row narrower than the header", "csv",
               "ts,instance,latency_ms,status\n1764480000000,a,1\n1764480000000,a,1,200\n", "",
               "f.log:2: 3 cells where the header has 4", 1, 1});
  r.push_back({"csv text after a closing quote", "csv",
               "ts,instance,latency_ms,status\n1764480000000,\"a\"b,1,200\n"
               "1764480000000,c,1,200\n",
               "", "f.log:2: text after a closing quote", 1, 1});
  r.push_back({"csv unterminated quote", "csv",
               "ts,instance,latency_ms,status\n1764480000000,\"a,1,200\n", "",
               "f.log:2: unterminated quoted field", 0, 1});
  r.push_back(
      {"otlp span without end", "otlp",
       R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"chat m","startTimeUnixNano":"1","attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"m"}}]}]}]}]})",
       "",
       "f.log:1: resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: missing required "
       "field",
       0, 1});
  r.push_back(
      {"otlp call without address", "otlp",
       R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}]}]}]}]})",
       "",
       "f.log:1: resourceSpans[0].scopeSpans[0].spans[0].server.address: missing: a call "
       "needs server.address or gen_ai.provider.name",
       0, 1});
  r.push_back({"prometheus failed query", "prometheus",
               R"({"status":"error","errorType":"bad_data","error":"parse error"})", "",
               "f.log:1: status: the query failed: parse error", 0, 0});
  r.push_back(
      {"prometheus unknown role", "prometheus",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"x","instance":"a"},"values":[[1,"1"]]}]}})",
       "",
       "f.log:1: data.result[0].metric.__name__: expected 'calls', 'failures' or 'slow', got "
       "'x' (see --map series=LABEL)",
       0, 1});
  // A count is never negative (-1 meant "no series" and read as a missing calls series) nor
  // past 32 bits (1e300 was stored as 0), and a step's failures are among its calls.
  for (const char* v : {"-5", "1e300"})
    r.push_back(
        {std::string("prometheus count ") + v, "prometheus",
         std::string(
             R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"calls","instance":"a"},"values":[[1,")") +
             v + R"("]]}]}})",
         "",
         std::string("f.log:1: data.result[0].values[0]: expected a value from 0 to 4e9 (a count "
                     "per step, or a p99 in ms), got '") +
             v + "'",
         0, 1});
  r.push_back(
      {"prometheus failures over calls", "prometheus",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"calls","instance":"a"},"values":[[1,"10"],[2,"10"]]},{"metric":{"__name__":"failures","instance":"a"},"values":[[1,"50"],[2,"5"]]}]}})",
       "", "f.log:1: failures: failures (50) over the calls (10) of instance 'a' at 1.000000", 1,
       1});
  // Text after a NUL byte is not silently dropped.
  r.push_back({"prometheus NUL byte", "prometheus",
               std::string(R"({"status":"success","data":{"resultType":"matrix","result":[]}})") +
                   std::string(1, '\0') + "{",
               "", "f.log:1: invalid JSON: a NUL byte at offset 63", 0, 0});
  // The response as a whole is judged first, wherever its status stands.
  r.push_back(
      {"prometheus failed query, status last", "prometheus",
       R"({"data":{"resultType":"matrix","result":[{"metric":{"__name__":"bogus","instance":"x"},"values":[[1,"1"]]}]},"error":"boom","status":"error"})",
       "", "f.log:1: status: the query failed: boom", 0, 0});
  r.push_back(
      {"prometheus bad series, status last", "prometheus",
       R"({"data":{"resultType":"matrix","result":[{"metric":{"__name__":"calls","instance":"x"},"values":[[1,"1"]]},{"metric":{"__name__":"calls","instance":"y"},"values":[[1,"x"]]}]},"status":"success"})",
       "", "f.log:1: data.result[1].values[0]: expected a number, got 'x'", 1, 1});
  r.push_back({"jsonl", "jsonl",
               "{\"ts\":1,\"instance\":\"a\",\"latency_ms\":1,\"status\":200}\n{\"ts\":1}\n", "",
               "f.log:2: instance: missing required field", 1, 1});
  outOfRangeTimes(r);

  return r;
}

std::string denseProm(std::size_t points, std::size_t series) {
  std::string text = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (std::size_t s = 0; s < series; ++s) {
    text += std::string(s ? "," : "") + R"({"metric":{"__name__":"calls","instance":"i)" +
            std::to_string(s) + R"("},"values":[)";
    for (std::size_t k = 1; k <= points / series; ++k)
      text += (k > 1 ? ",[" : "[") + std::to_string(k) + R"(,"1"])";
    text += "]}";
  }
  return text + "]}}";
}
