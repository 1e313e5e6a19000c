#include "source/odbc/result_fetcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/errors.h"
#include "source/odbc/diagnostics.h"

namespace mssql_cdc::odbc {
namespace {

constexpr std::size_t kFetchBufferBytes = 8 << 20;

}  // namespace

ResultFetcher::ResultFetcher(OdbcStatement& statement, std::vector<ResultSlots*> columns,
                             std::size_t max_rows)
    : statement_(statement), columns_(std::move(columns)) {
  const auto count = static_cast<std::size_t>(statement_.ColumnCount());
  if (count != columns_.size()) {
    throw SourceError("the server answered with " + std::to_string(count) + " columns where " +
                      std::to_string(columns_.size()) + " were asked for");
  }
  std::vector<ColumnDescription> described;
  std::size_t row_bytes = sizeof(SQLUSMALLINT);
  first_unbound_ = columns_.size();
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    described.push_back(statement_.Describe(static_cast<SQLUSMALLINT>(i + 1)));
    if (first_unbound_ == columns_.size() && !columns_[i]->Bindable(described.back())) {
      first_unbound_ = i;
    }
    if (first_unbound_ == columns_.size()) row_bytes += columns_[i]->SlotBytes(described.back());
  }
  rows_per_fetch_ = one_row_at_a_time()
                        ? 1
                        : std::clamp<std::size_t>(kFetchBufferBytes / row_bytes, 1,
                                                  std::max<std::size_t>(max_rows, 1));
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    columns_[i]->Allocate(described[i], i < first_unbound_ ? rows_per_fetch_ : 1);
  }
  // The array attributes are set only now, after the statement ran: Microsoft's driver
  // answers a statement executed with a row array size above 1 through a server cursor
  // (sp_cursoropen) instead of the plain result stream.
  const SQLHSTMT stmt = statement_.handle();
  row_status_.assign(rows_per_fetch_, 0);
  statement_.Check(SQLSetStmtAttr(stmt, SQL_ATTR_ROW_BIND_TYPE,
                                  reinterpret_cast<SQLPOINTER>(SQL_BIND_BY_COLUMN), 0),
                   "setting column-wise binding");
  statement_.Check(SQLSetStmtAttr(stmt, SQL_ATTR_ROW_ARRAY_SIZE,
                                  reinterpret_cast<SQLPOINTER>(rows_per_fetch_), 0),
                   "setting the row array size");
  statement_.Check(SQLSetStmtAttr(stmt, SQL_ATTR_ROWS_FETCHED_PTR, &fetched_, 0),
                   "setting the rows-fetched pointer");
  statement_.Check(SQLSetStmtAttr(stmt, SQL_ATTR_ROW_STATUS_PTR, row_status_.data(), 0),
                   "setting the row status array");
  for (std::size_t i = 0; i < first_unbound_; ++i) {
    columns_[i]->Bind(statement_, static_cast<SQLUSMALLINT>(i + 1));
  }
}

std::size_t ResultFetcher::Next() { return Fetch(/*read_unbound=*/true); }
std::size_t ResultFetcher::Skip() { return Fetch(/*read_unbound=*/false); }

std::size_t ResultFetcher::Fetch(bool read_unbound) {
  if (done_) return 0;
  fetched_ = 0;
  const SQLRETURN rc = SQLFetch(statement_.handle());
  if (rc == SQL_NO_DATA) {
    done_ = true;
    // Whatever follows the rows (further results, a late error) is read now: an error after
    // the last row means the rows are not all there.
    while (true) {
      const SQLRETURN more = SQLMoreResults(statement_.handle());
      if (more == SQL_NO_DATA) break;
      statement_.Check(more, "SQLMoreResults");
    }
    return 0;
  }
  statement_.Check(rc, "SQLFetch");
  if (rc == SQL_SUCCESS_WITH_INFO) {
    for (const auto& d : ReadDiagnostics(SQL_HANDLE_STMT, statement_.handle(), statement_.secrets())) {
      if (d.sqlstate == "01004") {
        throw OdbcFailure("SQLFetch", {d});  // a value was cut to its buffer: never deliver it
      }
      spdlog::debug("odbc: fetch message [{}] {}", d.sqlstate, d.message);
    }
  }
  const auto rows = static_cast<std::size_t>(fetched_);
  for (std::size_t i = 0; i < rows; ++i) {
    if (row_status_[i] == SQL_ROW_ERROR) {
      throw OdbcFailure("SQLFetch", ReadDiagnostics(SQL_HANDLE_STMT, statement_.handle(),
                                                    statement_.secrets()));
    }
  }
  if (read_unbound && rows > 0) {
    for (std::size_t i = first_unbound_; i < columns_.size(); ++i) {
      columns_[i]->Get(statement_, static_cast<SQLUSMALLINT>(i + 1));
    }
  }
  return rows;
}

}  // namespace mssql_cdc::odbc
