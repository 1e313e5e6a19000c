// LSN bounds, lsn_time_mapping lookups and split points, answered by the sim backend of
// Source, which holds the sim's CDC rules.
#include "core/time.h"
#include "sim_server/answers.h"
#include "sim_server/object_lookup.h"
#include "sim_server/result_types.h"
#include "sim_server/server_errors.h"

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
  const auto text = AsText(query.time);
  if (!text) return LsnScalar(reply, std::nullopt, query.lsn_text);
  auto time = ParseDateTime(*text);
  if (!time) throw SqlError(errors::DateConversionFailed());
  // CONVERT(datetime2(0), ...) keeps whole seconds.
  if (query.lsn_text) *time -= ((*time % kMicrosPerSecond) + kMicrosPerSecond) % kMicrosPerSecond;
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
  const auto time = query.at_or_before ? session.source().CommitTimeAtOrBefore(*lsn)
                                       : session.source().CommitTime(*lsn);
  if (!time) return;
  rows.Text(query.iso_text ? Style126(time->value) : FormatDateTime(time->value, 3));
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

}  // namespace mssql_cdc::sim_server
