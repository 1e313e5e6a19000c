// A statement of no known shape fails, never succeeds empty: with 208 when it reads from an
// object the simulated server does not have, else with 102 near the token where it left every
// known shape.
#include "sim_server/answers.h"
#include "sim_server/object_lookup.h"
#include "sim_server/server_errors.h"

namespace mssql_cdc::sim_server {

void Answer(Session& session, const UnknownStatement& query, tds::ReplyWriter&) {
  if (!query.object.empty() && !ObjectExists(session.catalog(), query.object)) {
    throw SqlError(errors::InvalidObjectName(query.object));
  }
  throw SqlError(errors::IncorrectSyntax(query.near));
}

}  // namespace mssql_cdc::sim_server
