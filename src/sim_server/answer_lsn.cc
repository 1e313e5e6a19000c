// LSN bounds, lsn_time_mapping lookups and split points, answered by the sim backend of
// Source, which holds the sim's CDC rules.
#include "core/errors.h"
#include "core/time.h"
#include "sim/sqlite.h"
#include "sim_server/answers.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"
#include "sim_server/at_time_zone.h"
#include "source/source_clock.h"

namespace mssql_cdc::sim_server {
namespace {

void BinaryLsn(tds::ResultSet& rows, const Lsn& lsn) {
  rows.Binary(std::string_view(reinterpret_cast<const char*>(lsn.data()), Lsn::kSize));
}

// An LSN as binary(10), or as CONVERT(varchar(22), lsn, 1) writes it when `text`.
void SendLsn(tds::ResultSet& rows, const Lsn& lsn, bool text) {
  if (text) {
    rows.Text(lsn.ToString());
  } else {
    BinaryLsn(rows, lsn);
  }
}

const SqlType& LsnType(bool text) { return text ? types::LsnText() : types::Binary10(); }

// One row of one unnamed binary(10) (or varchar(22)) column, NULL when `lsn` is nullopt.
void LsnScalar(tds::ReplyWriter& reply, const std::optional<Lsn>& lsn, bool text = false) {
  tds::ResultSet& rows = reply.BeginResult({Column("", LsnType(text))});
  if (lsn) {
    SendLsn(rows, *lsn, text);
  } else {
    rows.Null();
  }
  rows.EndRow();
}

// CONVERT(varchar(23), CAST(t AS datetime2(3)), 126): ISO 8601 with a T, and the milliseconds
// only when they are not zero.
std::string Style126(std::int64_t micros) {
  std::string text = FormatIsoMillis(micros);
  if (text.ends_with(".000")) text.resize(text.size() - 4);
  return text;
}

}  // namespace

void Answer(Session& session, const MaxLsnQuery& query, tds::ReplyWriter& reply) {
  LsnScalar(reply, session.source().MaxLsn(), query.lsn_text);
}

void Answer(Session& session, const MinLsnQuery& query, tds::ReplyWriter& reply) {
  // Zero, not an error, for an unknown instance and for one the login may not read: the
  // function does not tell the two apart.
  Lsn min_lsn;
  if (const auto name = AsText(query.capture_instance)) {
    const auto instance = FindCaptureInstance(session.catalog(), *name);
    if (instance && session.access().CanReadChangeTable(instance->name)) {
      min_lsn = session.source().MinLsn(instance->name);
    }
  }
  LsnScalar(reply, min_lsn, query.lsn_text);
}

void Answer(Session&, const LsnStepQuery& query, tds::ReplyWriter& reply) {
  const auto lsn = AsLsn(query.lsn);
  if (!lsn) return LsnScalar(reply, std::nullopt, query.lsn_text);
  LsnScalar(reply, query.increment ? lsn->Increment() : lsn->Decrement(), query.lsn_text);
}

void Answer(Session& session, const NthCommitAfterQuery& query, tds::ReplyWriter& reply) {
  const auto count = AsInteger(query.count);
  if (!count || *count < 0) throw SqlError(errors::InvalidTopValue());
  const auto after = AsLsn(query.after);
  std::optional<Lsn> nth;
  if (*count > 0 && after) nth = session.source().NthCommitAfter(*after, *count);
  LsnScalar(reply, nth, query.lsn_text);
}

void Answer(Session& session, const TimeToLsnQuery& query, tds::ReplyWriter& reply) {
  // CONVERT(datetime2(0), text, 126): whole seconds.
  const auto seconds = [&](const SqlValue& value) -> std::optional<std::int64_t> {
    const auto text = AsText(value);
    if (!text) return std::nullopt;
    auto time = ParseDateTime(*text);
    if (!time) throw SqlError(errors::DateConversionFailed());
    if (query.lsn_text) *time -= ((*time % kMicrosPerSecond) + kMicrosPerSecond) % kMicrosPerSecond;
    return time;
  };
  auto time = seconds(query.time);
  if (time && query.zone) {
    const SourceClock zone = AtTimeZone(AsText(*query.zone).value_or(""));
    const auto later = seconds(query.time2);
    const std::int64_t local = zone.ToLocal(UtcMicros{*time}).value;
    time = later ? std::min(local, zone.ToLocal(UtcMicros{*later + kMicrosPerHour}).value - kMicrosPerHour) : later;
  }
  if (!time) return LsnScalar(reply, std::nullopt, query.lsn_text);
  // No entry that old: sys.fn_cdc_map_time_to_lsn answers the zero LSN, which CONVERT shows.
  auto found = session.source().LastCommitAtOrBefore(LocalMicros{*time});
  if (!found && query.lsn_text) found = Lsn();
  LsnScalar(reply, found, query.lsn_text);
}

void Answer(Session& session, const CommitTimeQuery& query, tds::ReplyWriter& reply) {
  tds::ResultSet& rows = reply.BeginResult(
      {query.iso_text ? Column("", types::IsoTimeText()) : Column("tran_end_time", types::Datetime(), false)});
  const auto lsn = AsLsn(query.lsn);
  if (!lsn) return;
  std::optional<std::int64_t> time;
  if (query.zone) {
    const SourceClock zone = AtTimeZone(AsText(*query.zone).value_or(""));
    if (auto utc = UtcCommitTime(session.source(), zone, *lsn, query.at_or_before)) time = utc->value;
  } else if (auto local = query.at_or_before ? session.source().CommitTimeAtOrBefore(*lsn)
                                              : session.source().CommitTime(*lsn)) {
    time = local->value;
  }
  if (!time) return;
  rows.Text(query.iso_text ? Style126(*time) : FormatDateTime(*time, 3));
  rows.EndRow();
}

void Answer(Session& session, const SplitPointsQuery& query, tds::ReplyWriter& reply) {
  const auto instance = FindChangeTable(session.catalog(), query.change_table);
  if (!instance) throw SqlError(errors::InvalidObjectName("cdc." + query.change_table));
  if (!session.access().CanReadChangeTable(instance->name)) {
    throw SqlError(errors::SelectPermissionDenied(instance->name + "_CT",
                                                  session.database_name(), "cdc"));
  }
  if (query.tiles < 1) throw SqlError(errors::NtileArgumentNotPositive());
  const auto from = AsLsn(query.from);
  const auto to = AsLsn(query.to);
  tds::ResultSet& rows = reply.BeginResult({Column("b", LsnType(query.lsn_text)),
                                            Column("n", LsnType(query.lsn_text)),
                                            Column("r", types::Bigint())});
  if (!from || !to) return;
  const int tiles = query.tiles > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(query.tiles);
  for (const SplitPoint& point : session.source().SplitPoints(instance->name, *from, *to, tiles)) {
    SendLsn(rows, point.bound, query.lsn_text);
    SendLsn(rows, point.next, query.lsn_text);
    rows.Int(point.rows);
    rows.EndRow();
  }
}

namespace {

// MIN and MAX(tran_end_time) of the lsn_time_mapping entries in [from, to]; nullopt for none.
std::optional<std::pair<LocalMicros, LocalMicros>> LocalTimeSpan(Session& session, const SqlValue& from,
                                                                 const SqlValue& to) {
  const auto first = AsLsn(from), last = AsLsn(to);
  if (!first || !last) return std::nullopt;
  // Times are stored as "YYYY-MM-DD HH:MM:SS.fff": text order is time order.
  sim::Statement q(session.db(),
                   "SELECT MIN(tran_end_time), MAX(tran_end_time) FROM cdc_lsn_time_mapping "
                   "WHERE start_lsn BETWEEN ?1 AND ?2");
  q.BindLsn(1, *first);
  q.BindLsn(2, *last);
  if (!q.Step() || q.IsNull(0)) return std::nullopt;
  const auto min = ParseDateTime(std::string(q.TextView(0)));
  const auto max = ParseDateTime(std::string(q.TextView(1)));
  if (!min || !max) throw InternalError("cdc_lsn_time_mapping.tran_end_time: not a time");
  return std::pair{LocalMicros{*min}, LocalMicros{*max}};
}

}  // namespace

void Answer(Session& session, const RangeOffsetQuery& query, tds::ReplyWriter& reply) {
  const SourceClock zone = AtTimeZone(AsText(query.zone).value_or(""));
  tds::ResultSet& rows = reply.BeginResult({Column("", types::Int())});
  std::optional<int> offset;
  if (const auto span = LocalTimeSpan(session, query.from, query.to)) {
    offset = RangeOffset(zone, span->first, span->second);
  }
  if (offset) {
    rows.Int(*offset);
  } else {
    rows.Null();
  }
  rows.EndRow();
}

void Answer(Session& session, const FallBackDropsQuery& query, tds::ReplyWriter& reply) {
  const SourceClock zone = AtTimeZone(AsText(query.zone).value_or(""));
  tds::ResultSet& rows = reply.BeginResult({Column("l", types::LsnText()), Column("t", types::IsoTimeText())});
  const auto span = LocalTimeSpan(session, query.from, query.to);
  const auto upto = AsLsn(query.upto);
  if (!span || !upto) return;
  Source& source = session.source();
  const auto lo = source.LastCommitAtOrBefore(LocalMicros{span->first.value - 3 * kMicrosPerHour});
  std::optional<LocalMicros> previous;
  for (auto next = source.NthCommitAfter(lo.value_or(Lsn()), 1); next && *next <= *upto;
       next = source.NthCommitAfter(*next, 1)) {
    const auto time = source.CommitTime(*next);
    if (!time) continue;
    if (previous && time->value < previous->value - kMicrosPerMinute && zone.SecondReading(*time)) {
      rows.Text(next->ToString());
      rows.Text(Style126(time->value));
      rows.EndRow();
    }
    previous = time;
  }
}

}  // namespace mssql_cdc::sim_server
