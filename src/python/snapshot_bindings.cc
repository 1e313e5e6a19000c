// The batch snapshot source of Spark mode (engine/snapshot_scan.h): the driver's plan and
// schema, and each task's range read, for mssql_cdc.snapshot_source.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "delta/schema.h"
#include "engine/snapshot_scan.h"
#include "python/arrow_stream.h"
#include "python/source_options.h"

namespace nb = nanobind;

namespace mssql_cdc::python {

void BindSnapshot(nb::module_& m) {
  m.def("snapshot_schema_json",
        [](nb::handle options) {
          const SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          return delta::ToDeltaSchemaString(*SnapshotScanSchema(parsed));
        },
        nb::arg("options"),
        "The snapshot source's schema as Spark StructType JSON: the output schema, then "
        "_chunk INT with snapshotChunks.");
  m.def("snapshot_offset",
        [](nb::handle options, const std::string& lsn) {
          const SourceOptions parsed = ParseSourceOptions(options);
          const Lsn given = Lsn::ParseLenient(lsn);
          nb::gil_scoped_release release;
          return SnapshotScanOffset(parsed, given).ToJson();
        },
        nb::arg("options"), nb::arg("lsn"),
        "The offset JSON of a snapshot stamped `lsn`: that LSN and its commit time (UTC).");
  m.def("plan_snapshot",
        [](nb::handle options, int partitions) {
          const SourceOptions parsed = ParseSourceOptions(options);
          nb::gil_scoped_release release;
          return PlanSnapshotScan(parsed, partitions).ToJson();
        },
        nb::arg("options"), nb::arg("partitions"),
        "Plans a snapshot scan: the stamp (snapshotLsn, or the max LSN now) and the key "
        "ranges (snapshotChunks, or at most `partitions` planned), as JSON.");
  m.def("read_snapshot_range",
        [](nb::handle options, const std::string& scan, std::size_t range) {
          const SourceOptions parsed = ParseSourceOptions(options);
          const SnapshotScan planned = SnapshotScan::FromJson(scan);
          std::shared_ptr<arrow::RecordBatchReader> reader;
          {
            nb::gil_scoped_release release;
            reader = ReadSnapshotScanRange(parsed, planned, range);
          }
          return ArrowStream(std::move(reader));
        },
        nb::arg("options"), nb::arg("scan"), nb::arg("range"),
        "Range `range` of a planned scan as an Arrow stream of operation-0 rows stamped with "
        "the scan's LSN.");
}

}  // namespace mssql_cdc::python
