// The token order of one reply message: every DONE, DONEPROC or DONEINPROC that more tokens
// follow must carry DONE_MORE, and the last one must not (FreeTDS treats an end token
// without DONE_MORE as the end of the reply). A DONE is therefore held back until the next
// token, or the end of the message, shows which it is.
#pragma once

#include <optional>

#include "tds/message_writer.h"
#include "tds/tokens.h"

namespace mssql_cdc::tds {

class TokenStream {
 public:
  explicit TokenStream(MessageWriter& writer) : writer_(writer) {}

  // The buffer to append the next token to; a held DONE goes out first, with DONE_MORE.
  WireBuffer& Next();
  // Holds `done` until the next token or the end of the message.
  void Done(const DoneToken& done);
  // Sends the message, the held DONE last as it is.
  void EndMessage();

  // Between rows: lets packets go when enough has gathered. Throws
  // ReplyAborted(kAttention) when the client has asked to stop.
  void RowBoundary() {
    if (writer_.FlushIfFull()) throw ReplyAborted(ReplyAborted::Reason::kAttention);
  }

  WireBuffer& buffer() { return writer_.buffer(); }

 private:
  MessageWriter& writer_;
  std::optional<DoneToken> held_;
};

}  // namespace mssql_cdc::tds
