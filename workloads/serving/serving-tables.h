/*
 * The tables of a serving run a person (or scripts/plot-run) looks at: requests.csv, one row per
 * request, and steps.csv, one row per engine step. Times in ms from the start of the run.
 */
#ifndef FABRICSIM_SERVING_SERVING_TABLES_H
#define FABRICSIM_SERVING_SERVING_TABLES_H

#include "serving-metrics.h"

#include <string>

namespace fabricsim
{

/**
 * \brief requests.csv: id, send_ms (when the client sent it; an open-loop source sends at the
 * arrival), arrival_ms, queued_ms, first_token_ms, finish_ms, prompt_tokens, output_tokens,
 * tokens_done, ttft_ms, tpot_ms, e2e_ms, preemptions (and cached_prompt_tokens with prefix
 * caching). Cells a request has not reached are empty.
 */
std::string RequestsCsv(const ServingResult& r);

/**
 * \brief steps.csv: step, pool, engine, virtual_engine, start_ms, end_ms, sequences,
 * prefill_tokens, decode_tokens, compute_ms, one comm_<kind>_ms column per collective kind of
 * the run (exposed), sync_ms, idle_ms: means over the step's ranks, in completion order.
 */
std::string StepsCsv(const ServingResult& r);

} // namespace fabricsim

#endif
