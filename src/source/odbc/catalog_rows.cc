#include "source/odbc/catalog_rows.h"

#include <algorithm>
#include <numeric>

#include "core/errors.h"

namespace mssql_cdc::odbc {

CatalogRows::CatalogRows(OdbcStatement& statement, std::vector<NamedColumn> columns, std::string what)
    : statement_(statement), columns_(std::move(columns)), what_(std::move(what)) {
  for (const auto& column : columns_) indexes_.push_back(statement_.RequireColumn(column.name, what_));
  read_order_.resize(columns_.size());
  std::iota(read_order_.begin(), read_order_.end(), 0);
  std::sort(read_order_.begin(), read_order_.end(),
            [&](std::size_t a, std::size_t b) { return indexes_[a] < indexes_[b]; });
  cells_.resize(columns_.size());
}

bool CatalogRows::Next() {
  if (!statement_.Fetch()) return false;
  for (std::size_t i : read_order_) {
    Cell& cell = cells_[i];
    const SQLUSMALLINT column = indexes_[i];
    cell.null = true;
    switch (columns_[i].kind) {
      case CellKind::kText:
        if (auto v = statement_.GetText(column)) cell.null = false, cell.bytes = std::move(*v);
        break;
      case CellKind::kBytes:
        if (auto v = statement_.GetBytes(column)) cell.null = false, cell.bytes = std::move(*v);
        break;
      case CellKind::kInt:
        if (auto v = statement_.GetInt(column)) cell.null = false, cell.integer = *v;
        break;
      case CellKind::kTime:
        if (auto v = statement_.GetTimestamp(column)) cell.null = false, cell.micros = TimestampMicros(*v);
        break;
    }
  }
  return true;
}

const CatalogRows::Cell& CatalogRows::Checked(std::size_t i, CellKind kind) const {
  if (i >= cells_.size() || columns_[i].kind != kind) {
    throw InternalError("column " + std::to_string(i) + " of " + what_ + " read as the wrong kind");
  }
  return cells_[i];
}

std::optional<std::string> CatalogRows::Text(std::size_t i) const {
  const Cell& c = Checked(i, CellKind::kText);
  return c.null ? std::nullopt : std::optional<std::string>(c.bytes);
}

std::optional<std::int64_t> CatalogRows::Int(std::size_t i) const {
  const Cell& c = Checked(i, CellKind::kInt);
  return c.null ? std::nullopt : std::optional<std::int64_t>(c.integer);
}

std::optional<std::string> CatalogRows::Bytes(std::size_t i) const {
  const Cell& c = Checked(i, CellKind::kBytes);
  return c.null ? std::nullopt : std::optional<std::string>(c.bytes);
}

std::optional<LocalMicros> CatalogRows::Time(std::size_t i) const {
  const Cell& c = Checked(i, CellKind::kTime);
  return c.null ? std::nullopt : std::optional<LocalMicros>(LocalMicros{c.micros});
}

std::string CatalogRows::RequiredText(std::size_t i) const {
  auto text = Text(i);
  if (!text) {
    throw SourceError("the server's answer to " + what_ + " has a NULL " + columns_[i].name);
  }
  return *text;
}

}  // namespace mssql_cdc::odbc
