// Python access to the completeness verdict (engine/finalization.h) in a control table at a
// path or file:// URI. Times cross as "YYYY-MM-DDTHH:MM:SS.mmm" text, naive UTC.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/offset.h"
#include "core/table_ref.h"
#include "core/time.h"
#include "engine/finalization.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

std::optional<std::string> Candidate(const std::string& end_offset,
                                     const std::string& granularity) {
  const Offset end = Offset::FromJson(end_offset);
  const Granularity g = ParseGranularity(granularity);
  if (!end.commit_ts) return std::nullopt;
  return FormatIsoMillis(Truncate(*end.commit_ts, g).value);
}

std::optional<std::string> AdvanceVerdict(const std::string& control,
                                          const std::string& table_name,
                                          const std::string& end_offset,
                                          const std::string& granularity) {
  const Offset end = Offset::FromJson(end_offset);
  const Granularity g = ParseGranularity(granularity);
  TableRef::RequirePath(control, "control_table");
  nb::gil_scoped_release release;
  if (!Advance(control, table_name, end, g)) return std::nullopt;
  return FormatIsoMillis(Truncate(*end.commit_ts, g).value);
}

std::optional<std::string> FinalizedUntil(const std::string& control,
                                          const std::string& table_name) {
  TableRef::RequirePath(control, "control_table");
  nb::gil_scoped_release release;
  auto verdict = ReadVerdict(control, table_name);
  if (!verdict) return std::nullopt;
  return FormatIsoMillis(verdict->finalized_until.value);
}

UtcMicros PeriodEnd(const std::string& period_end) {
  const auto micros = ParseDateTime(period_end);
  if (!micros) {
    throw ConfigError("period_end must be a UTC time 'YYYY-MM-DD[THH:MM[:SS[.fff]]]', got '" +
                      period_end + "'");
  }
  return UtcMicros{*micros};
}

bool PeriodIsFinal(const std::string& control, const std::string& table_name,
                   const std::string& period_end) {
  const UtcMicros end = PeriodEnd(period_end);
  TableRef::RequirePath(control, "control_table");
  nb::gil_scoped_release release;
  return IsFinal(control, table_name, end);
}

}  // namespace

void BindFinalization(nb::module_& m) {
  m.def("verdict_covers",
        [](const std::optional<std::string>& finalized_until, const std::string& period_end) {
          return VerdictCovers(finalized_until ? std::optional(PeriodEnd(*finalized_until))
                                               : std::nullopt,
                               PeriodEnd(period_end));
        },
        nb::arg("finalized_until").none(), nb::arg("period_end"),
        "Whether a verdict `finalized_until` (a UTC time, or None) says the period ending at "
        "`period_end` is complete: the rule of is_final, for a verdict read through Spark.");
  nb::class_<ConflictRetry>(m, "ConflictRetry",
                            "How a verdict write that lost to a concurrent commit is retried, "
                            "as the engine retries its own: one object per write.")
      .def(nb::init<>())
      .def("saw_table_version", &ConflictRetry::SawTableVersion, nb::arg("version"),
           "Reports the table version found after a lost try; a newer one than last reported "
           "means another writer committed, and the quiet minute starts again.")
      .def("next_delay_seconds",
           [](ConflictRetry& retry) -> std::optional<double> {
             const auto delay = retry.NextDelay();
             if (!delay) return std::nullopt;
             return std::chrono::duration<double>(*delay).count();
           },
           "Seconds to wait before the next try; None once it is time to give up: after a minute "
           "without another writer's commit, or ten minutes in all.");
  m.def("finalization_candidate", &Candidate, nb::arg("end_offset"), nb::arg("granularity"),
        "The verdict a batch ending at `end_offset` justifies: its commit time truncated to "
        "the granularity (minute, hour, day); None when the offset has no commit time.");
  m.def("finalization_advance", &AdvanceVerdict, nb::arg("control"), nb::arg("table_name"),
        nb::arg("end_offset"), nb::arg("granularity"),
        "Moves the verdict of `table_name` forward to the candidate of `end_offset` (creating "
        "the control table when missing); returns the new verdict, or None when it did not "
        "move (not later than the stored one, or no commit time).");
  m.def("finalized_until", &FinalizedUntil, nb::arg("control"), nb::arg("table_name"),
        "The verdict of `table_name`, or None when there is none.");
  m.def("is_final", &PeriodIsFinal, nb::arg("control"), nb::arg("table_name"),
        nb::arg("period_end"),
        "Whether every period ending at or before `period_end` is complete.");
}

}  // namespace mssql_cdc::python
