#pragma once
// Prometheus HTTP API query_range results ({"status":"success","data":{"resultType":"matrix",
// "result":[{"metric":{...},"values":[[<unix s>,"<value>"],...]}]}}) as per-interval aggregate
// samples: calls, failures and slow calls per instance per step.
//
// Each series plays one role, read from a label (field `series`, default `__name__`) whose
// value is the role's name (fields `calls`, `failures`, `slow`; defaults "calls", "failures",
// "slow"); the instance comes from label `instance` and the model from label `model`. Values
// are counts over the step ending at the timestamp (`increase(x[STEP])`), e.g.
//   label_replace(sum by (instance) (increase(llm_requests_total[15s])), "__name__", "calls", "",
//   "") or label_replace(sum by (instance) (increase(llm_requests_total{code=~"5.."}[15s])), ...)
// A sample without a calls series is an error; failures default to 0, slow to unknown (-1).
namespace spillway::formats {}
