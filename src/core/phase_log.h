// The engine's phase log. When the environment variable MSSQL_CDC_PHASE_LOG names a file, each
// step after which a crash leaves a distinct state on disk appends one line to it ("batch 7
// bronze_appended", "wave 3 in_bronze"), with one write(2) each, so that a process killed at
// any moment has left every line it reached. Crash tests read it to know in which phase each
// kill landed, and stop when every phase has been hit often enough. Without the variable a
// note costs one check of a flag read once.
#pragma once

#include <string_view>

namespace mssql_cdc {

void NotePhase(std::string_view line);

}  // namespace mssql_cdc
