// Python access to the Delta writer (delta/table.h): create, exactly-once append, upsert by
// key, read and snapshot of a Delta table at a path or file:// URI. Arrow crosses the border
// through the PyCapsule interface: schemas and data from any object that exports them
// (pyarrow.Schema, Table, RecordBatchReader), reads back as an ArrowStream.
#include <arrow/record_batch.h>
#include <arrow/table.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "delta/table.h"
#include "bindings/arrow_stream.h"

namespace nb = nanobind;

namespace mssql_cdc::python {
namespace {

using delta::AppendOptions;
using delta::CommitResult;
using delta::DeltaTable;

delta::StringMap ToStringMap(nb::handle mapping, const char* what) {
  delta::StringMap out;
  if (mapping.is_none()) return out;
  if (!nb::isinstance<nb::dict>(mapping)) throw ConfigError(std::string(what) + " must be a dict");
  for (auto [key, value] : nb::borrow<nb::dict>(mapping)) {
    if (!nb::isinstance<nb::str>(key)) throw ConfigError(std::string(what) + " keys must be str");
    out[nb::cast<std::string>(key)] = nb::cast<std::string>(nb::str(value));
  }
  return out;
}

// A filter literal as the text the engine parses in the column's type.
std::string LiteralText(nb::handle value) {
  if (value.is_none()) throw ConfigError("a filter literal cannot be None");
  if (nb::isinstance<nb::bool_>(value)) return nb::cast<bool>(value) ? "true" : "false";
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::hasattr(value, "isoformat")) return nb::cast<std::string>(value.attr("isoformat")());
  return nb::cast<std::string>(nb::str(value));
}

std::vector<delta::FilterTerm> ToFilter(nb::handle filter) {
  std::vector<delta::FilterTerm> terms;
  if (filter.is_none()) return terms;
  for (nb::handle item : filter) {
    nb::tuple term = nb::tuple(nb::borrow(item));
    if (term.size() != 3) {
      throw ConfigError("a filter term is a (column, op, value) tuple, got " +
                        nb::cast<std::string>(nb::repr(item)));
    }
    terms.push_back({nb::cast<std::string>(term[0]), nb::cast<std::string>(term[1]),
                     LiteralText(term[2])});
  }
  return terms;
}

std::optional<delta::Txn> ToTxn(const std::optional<std::string>& app_id,
                                const std::optional<std::int64_t>& version) {
  if (app_id.has_value() != version.has_value()) {
    throw ConfigError("app_id and version go together: give both for an exactly-once append, "
                      "or neither");
  }
  if (!app_id) return std::nullopt;
  if (app_id->empty()) throw ConfigError("app_id must not be empty");
  if (*version < 0) throw ConfigError("version must be >= 0, got " + std::to_string(*version));
  delta::Txn txn;
  txn.app_id = *app_id;
  txn.version = *version;
  return txn;
}

std::vector<std::shared_ptr<arrow::RecordBatch>> ReadAll(arrow::RecordBatchReader& reader) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    arrow::Status status = reader.ReadNext(&batch);
    if (!status.ok()) throw ConfigError("reading the data to write: " + status.ToString());
    if (!batch) break;
    if (batch->num_rows() > 0) batches.push_back(std::move(batch));
  }
  return batches;
}

nb::dict ResultDict(const CommitResult& r) {
  nb::dict d;
  d["version"] = r.version;
  d["written"] = r.written;
  d["files"] = r.files;
  d["rows"] = r.rows;
  d["bytes"] = r.bytes;
  d["attempts"] = r.attempts;
  return d;
}

AppendOptions MakeAppendOptions(const std::optional<std::string>& app_id,
                                const std::optional<std::int64_t>& version,
                                const std::optional<std::string>& user_metadata,
                                bool merge_schema, const std::string& compression,
                                std::int64_t target_file_bytes) {
  if (target_file_bytes <= 0) {
    throw ConfigError("target_file_bytes must be > 0, got " + std::to_string(target_file_bytes));
  }
  AppendOptions options;
  options.txn = ToTxn(app_id, version);
  options.user_metadata = user_metadata;
  options.merge_schema = merge_schema;
  options.write.compression = compression;
  options.write.target_file_bytes = target_file_bytes;
  return options;
}

std::int64_t Create(const std::string& uri, nb::handle schema, nb::handle properties,
                    std::optional<std::string> name, std::optional<std::string> description) {
  delta::CreateOptions options;
  options.schema = ImportArrowSchema(schema, "schema");
  options.properties = ToStringMap(properties, "properties");
  options.name = std::move(name);
  options.description = std::move(description);
  nb::gil_scoped_release release;
  return DeltaTable::Create(uri, options).state().version;
}

nb::dict Append(const std::string& uri, nb::handle data, std::optional<std::string> app_id,
                std::optional<std::int64_t> version, std::optional<std::string> user_metadata,
                bool merge_schema, const std::string& compression,
                std::int64_t target_file_bytes) {
  AppendOptions options = MakeAppendOptions(app_id, version, user_metadata, merge_schema,
                                            compression, target_file_bytes);
  std::shared_ptr<arrow::RecordBatchReader> reader = ImportArrowStream(data, "data");
  CommitResult result;
  {
    nb::gil_scoped_release release;
    auto batches = ReadAll(*reader);
    DeltaTable table = DeltaTable::Open(uri);
    result = table.Append(batches, options);
  }
  return ResultDict(result);
}

nb::dict Upsert(const std::string& uri, const std::string& key_column, nb::handle data,
                std::optional<std::string> app_id, std::optional<std::int64_t> version,
                std::optional<std::string> user_metadata) {
  AppendOptions options = MakeAppendOptions(app_id, version, user_metadata, true, "snappy",
                                            128LL << 20);
  options.operation = "MERGE";
  std::shared_ptr<arrow::RecordBatchReader> reader = ImportArrowStream(data, "data");
  CommitResult result;
  {
    nb::gil_scoped_release release;
    auto batches = ReadAll(*reader);
    auto rows = arrow::Table::FromRecordBatches(reader->schema(), batches);
    if (!rows.ok()) throw ConfigError("the rows to upsert: " + rows.status().ToString());
    DeltaTable table = DeltaTable::Open(uri);
    result = table.UpsertByKey(key_column, *rows, options);
  }
  return ResultDict(result);
}

ArrowStream Read(const std::string& uri, nb::handle filter) {
  std::vector<delta::FilterTerm> terms = ToFilter(filter);
  std::shared_ptr<arrow::Table> rows;
  {
    nb::gil_scoped_release release;
    rows = DeltaTable::Open(uri).Read(terms);
  }
  return ArrowStream(std::make_shared<arrow::TableBatchReader>(rows));
}

nb::dict SnapshotDict(const std::string& uri) {
  std::optional<DeltaTable> table;
  {
    nb::gil_scoped_release release;
    table.emplace(DeltaTable::Open(uri));
  }
  const delta::TableState& s = table->state();
  nb::dict d;
  d["version"] = s.version;
  nb::dict apps;
  for (const auto& [app, v] : s.app_versions) apps[nb::str(app.c_str())] = v;
  d["app_versions"] = apps;
  nb::dict props;
  for (const auto& [k, v] : s.metadata.configuration) props[nb::str(k.c_str())] = v;
  d["properties"] = props;
  d["id"] = s.metadata.id;
  d["name"] = s.metadata.name;
  d["description"] = s.metadata.description;
  d["schema_string"] = s.metadata.schema_string;
  d["partition_columns"] = s.metadata.partition_columns;
  d["num_files"] = static_cast<std::int64_t>(s.files.size());
  std::int64_t bytes = 0;
  for (const auto& [path, add] : s.files) bytes += add.size;
  d["size_bytes"] = bytes;
  d["last_checkpoint_version"] = s.last_checkpoint_version;
  d["min_reader_version"] = s.protocol.min_reader_version;
  d["min_writer_version"] = s.protocol.min_writer_version;
  d["reader_features"] = s.protocol.reader_features;
  d["writer_features"] = s.protocol.writer_features;
  return d;
}

}  // namespace

void BindDelta(nb::module_& m) {
  m.def("txn_commit",
        [](const std::string& uri, const std::string& app_id)
            -> std::pair<std::int64_t, std::optional<std::string>> {
          nb::gil_scoped_release release;
          const auto table = DeltaTable::Open(uri);
          const auto& versions = table.state().app_versions;
          const auto version = versions.find(app_id);
          if (version == versions.end()) return {-1, std::nullopt};
          const auto commit = table.CommitHoldingTxn(app_id);
          return {version->second, commit ? commit->user_metadata : std::nullopt};
        },
        nb::arg("uri"), nb::arg("app_id"),
        "(txn version, userMetadata of the commit that set it or None) of `app_id` in the Delta "
        "table at `uri`; (-1, None) when it holds no txn of app_id.");
  m.def("delta_exists", [](const std::string& uri) { return DeltaTable::Exists(uri); },
        nb::arg("uri"), "Whether a Delta table (a _delta_log with a commit) is at `uri`.");
  m.def("delta_create", &Create, nb::arg("uri"), nb::arg("schema"),
        nb::arg("properties") = nb::none(), nb::arg("name") = nb::none(),
        nb::arg("description") = nb::none(),
        "Creates a Delta table from an Arrow schema (field metadata 'comment' is the column "
        "comment) and returns its version; a no-op when it exists with the same schema, "
        "SchemaChangedError when with another.");
  m.def("delta_append", &Append, nb::arg("uri"), nb::arg("data"), nb::arg("app_id") = nb::none(),
        nb::arg("version") = nb::none(), nb::arg("user_metadata") = nb::none(),
        nb::arg("merge_schema") = true, nb::arg("compression") = "snappy",
        nb::arg("target_file_bytes") = 128LL << 20,
        "Appends Arrow data (a Table or RecordBatchReader) in one commit. With app_id and "
        "version the append is exactly once: written=False and the version holding it when the "
        "table already has that app_id at that version or later. Returns dict(version, "
        "written, files, rows, bytes, attempts).");
  m.def("delta_upsert", &Upsert, nb::arg("uri"), nb::arg("key_column"), nb::arg("data"),
        nb::arg("app_id") = nb::none(), nb::arg("version") = nb::none(),
        nb::arg("user_metadata") = nb::none(),
        "Replaces the rows whose key_column equals a key of `data` and adds the others, in one "
        "copy-on-write commit. Returns the same dict as delta_append.");
  m.def("delta_read", &Read, nb::arg("uri"), nb::arg("filter") = nb::none(),
        "The table's rows, or those matching every (column, op, value) term, as an Arrow "
        "stream (pyarrow.RecordBatchReader.from_stream / pyarrow.table).");
  m.def("delta_snapshot", &SnapshotDict, nb::arg("uri"),
        "The table's current state replayed from its log: version, app_versions, properties, "
        "schema_string, num_files, protocol versions and features.");
}

}  // namespace mssql_cdc::python
