#include "tds/token_stream.h"

#include "tds/packet.h"

namespace mssql_cdc::tds {

WireBuffer& TokenStream::Next() {
  if (held_) {
    DoneToken more = *held_;
    more.status |= done::kMore;
    WriteDone(writer_.buffer(), more);
    held_.reset();
  }
  return writer_.buffer();
}

void TokenStream::Done(const DoneToken& done) {
  Next();
  held_ = done;
}

void TokenStream::EndMessage() {
  if (held_) {
    WriteDone(writer_.buffer(), *held_);
    held_.reset();
  }
  writer_.EndMessage();
}

}  // namespace mssql_cdc::tds
