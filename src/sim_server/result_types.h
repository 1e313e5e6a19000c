// The SQL Server types of the result columns the simulator sends, as SQL Server declares them
// for its catalog procedures and CDC functions (sysname is nvarchar(128)).
#pragma once

#include <string>

#include "core/sql_type.h"
#include "tds/query_handler.h"

namespace mssql_cdc::sim_server {

namespace types {
const SqlType& Sysname();
const SqlType& Binary10();
const SqlType& Varbinary128();
const SqlType& Bit();
const SqlType& Tinyint();
const SqlType& Smallint();
const SqlType& Int();
const SqlType& Bigint();
const SqlType& Decimal38();  // decimal(38,0), what SUM of a decimal(38,0) gives
const SqlType& Datetime();
const SqlType& NvarcharMax();
SqlType Nvarchar(int length);
const SqlType& LsnText();      // varchar(22): CONVERT(varchar(22), lsn, 1)
const SqlType& IsoTimeText();  // varchar(23): CONVERT(varchar(23), time, 126)
const SqlType& Datetime2_3();  // datetime2(3)
}  // namespace types

tds::ResultColumn Column(std::string name, const SqlType& type, bool nullable = true);

}  // namespace mssql_cdc::sim_server
