// Just enough XML reading for the answers object stores give (listings and errors): the text of
// named elements, entities decoded. Their documents are flat and never nest a tag in itself.
#pragma once

#include <string>
#include <vector>

namespace mssql_cdc::storage {

// The raw contents of each <tag>...</tag> in `xml`, in order.
std::vector<std::string> XmlElements(const std::string& xml, const std::string& tag);

// The text of the first <tag> in `xml`, with &amp; &lt; &gt; &quot; &apos; decoded; empty when
// there is none.
std::string XmlText(const std::string& xml, const std::string& tag);

}  // namespace mssql_cdc::storage
