// The C++ wrapper through the installed package: a result built with the Writer's
// object, array and string writers.
#include <cstdio>
#include <string_view>
#include <switchboard.hpp>

namespace sb = switchboard;

int main() {
  sb::Router router = sb::RouterBuilder()
                          .method("greet",
                                  [](const sb::Call& call, sb::Writer& out) {
                                    out.begin_object();
                                    out.key("greeting");
                                    out.string("hello, " + call.params_value()["name"].str());
                                    out.key("tags");
                                    out.begin_array();
                                    out.string("a\"b");
                                    out.end_array();
                                    out.end_object();
                                  })
                          .build();
  sb::Session session(router);
  auto resp = session.handle(R"({"jsonrpc":"2.0","method":"greet","params":{"name":"Zoë"},"id":1})");
  std::string_view want = R"({"jsonrpc":"2.0","result":{"greeting":"hello, Zoë","tags":["a\"b"]},"id":1})";
  if (!resp || *resp != want) {
    std::fprintf(stderr, "got %.*s\n", resp ? (int)resp->size() : 0, resp ? resp->data() : "");
    return 1;
  }
  std::printf("consumer_cpp %s: %.*s\n", sb::version().data(), (int)resp->size(), resp->data());
  return 0;
}
