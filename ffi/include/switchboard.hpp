// switchboard.hpp: a thin C++17 layer over switchboard.h: RAII handles, std::string_view
// views, std::function handlers, exceptions for failed calls. Header-only; link with
// libswitchboard like a C program. Written by hand (not generated).
//
// Ownership and thread rules are those of switchboard.h:
// - RouterBuilder: move-only; build() consumes it.
// - Router: copyable (each copy is a reference: swb_router_clone); immutable; share it
//   between threads freely. Handlers registered on a shared router run concurrently.
// - Session, Classifier: move-only; one thread at a time.
// - Call, Writer, Value, and every std::string_view they give: valid only during the
//   handler.
// - Views from Session::handle and Classifier: valid until the next call on that object.
#ifndef SWITCHBOARD_HPP
#define SWITCHBOARD_HPP

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "switchboard.h"

namespace switchboard {

/// A failed switchboard call: what() is the result code's text; detail() says more
/// where the wrapper knows it (which member is missing: "missing field `name`").
class Error : public std::runtime_error {
 public:
  explicit Error(swb_result code) : std::runtime_error(swb_result_str(code)), code_(code) {}
  Error(swb_result code, std::string detail)
      : std::runtime_error(swb_result_str(code)), code_(code), detail_(std::move(detail)) {}
  swb_result code() const noexcept { return code_; }
  /// What failed, for the client: the detail, or the code's text.
  const char* detail() const noexcept { return detail_.empty() ? what() : detail_.c_str(); }

 private:
  swb_result code_;
  std::string detail_;
};

/// Throws Error unless rc is SWB_RESULT_OK.
inline void check(swb_result rc) {
  if (rc != SWB_RESULT_OK) throw Error(rc);
}

/// Throw from a handler to answer with a JSON-RPC error object. Application errors use
/// codes outside -32768..-32000; data, if not empty, must be exactly one JSON value.
class RpcError : public std::exception {
 public:
  RpcError(std::int32_t code, std::string message, std::string data = {})
      : code_(code), message_(std::move(message)), data_(std::move(data)) {}
  std::int32_t code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& data() const noexcept { return data_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::int32_t code_;
  std::string message_;
  std::string data_;
};

/// The bytes of a view.
inline std::string_view view(swb_slice s) noexcept {
  return s.len == 0 ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s.ptr), s.len);
}

/// The library's version ("MAJOR.MINOR.PATCH"); compare with SWB_VERSION.
inline std::string_view version() noexcept { return swb_version(); }

/// Parser limits (SPEC.md's defaults until changed).
class Config {
 public:
  Config() { check(swb_config_new(&c_)); }
  ~Config() { swb_config_free(c_); }
  Config(const Config&) = delete;
  Config& operator=(const Config&) = delete;
  Config(Config&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Config& operator=(Config&& o) noexcept {
    std::swap(c_, o.c_);
    return *this;
  }
  Config& max_depth(std::size_t n) {
    check(swb_config_set_max_depth(c_, n));
    return *this;
  }
  Config& max_batch_len(std::size_t n) {
    check(swb_config_set_max_batch_len(c_, n));
    return *this;
  }
  Config& max_message_bytes(std::size_t n) {
    check(swb_config_set_max_message_bytes(c_, n));
    return *this;
  }
  Config& allow_batches(bool yes) {
    check(swb_config_set_allow_batches(c_, yes));
    return *this;
  }
  const swb_config* get() const noexcept { return c_; }

 private:
  swb_config* c_ = nullptr;
};

class ValueIterator;

/// A JSON value inside a call's params, read in place (no copy, no JSON library).
/// Valid during the handler only. Readers throw Error: SWB_RESULT_WRONG_KIND,
/// _NOT_REPRESENTABLE (1.0 is no int64, overflow), _NOT_FOUND, _INDEX_OUT_OF_RANGE;
/// thrown out of a handler, these answer -32602 Invalid params.
class Value {
 public:
  /// The absent value (no params; the key of an array element).
  Value() noexcept : v_{} {}
  explicit Value(const swb_value& v) noexcept : v_(v) {}
  swb_value_kind kind() const noexcept { return v_.kind; }
  bool is_absent() const noexcept { return v_.kind == SWB_VALUE_KIND_ABSENT; }
  bool is_null() const noexcept { return v_.kind == SWB_VALUE_KIND_NULL; }
  bool is_bool() const noexcept { return v_.kind == SWB_VALUE_KIND_BOOL; }
  bool is_number() const noexcept { return v_.kind == SWB_VALUE_KIND_NUMBER; }
  bool is_string() const noexcept { return v_.kind == SWB_VALUE_KIND_STRING; }
  bool is_array() const noexcept { return v_.kind == SWB_VALUE_KIND_ARRAY; }
  bool is_object() const noexcept { return v_.kind == SWB_VALUE_KIND_OBJECT; }
  /// The exact JSON bytes (a string with its quotes and escapes); empty when absent.
  std::string_view json() const noexcept { return view(v_.json); }

  bool as_bool() const {
    bool b = false;
    check(swb_value_as_bool(&v_, &b));
    return b;
  }
  std::int64_t as_int64() const {
    std::int64_t n = 0;
    check(swb_value_as_int64(&v_, &n));
    return n;
  }
  std::uint64_t as_uint64() const {
    std::uint64_t n = 0;
    check(swb_value_as_uint64(&v_, &n));
    return n;
  }
  double as_double() const {
    double d = 0;
    check(swb_value_as_double(&v_, &d));
    return d;
  }
  /// The string's text borrowed (no copy) if it has no escapes; nullopt if it has.
  std::optional<std::string_view> plain_str() const {
    swb_slice s{};
    swb_result rc = swb_value_as_plain_str(&v_, &s);
    if (rc == SWB_RESULT_STRING_ESCAPED) return std::nullopt;
    check(rc);
    return view(s);
  }
  /// The string's text, unescaped (UTF-8).
  std::string str() const {
    if (auto plain = plain_str()) return std::string(*plain);
    std::size_t n = 0;
    swb_result rc = swb_value_copy_str(&v_, nullptr, 0, &n);
    if (rc != SWB_RESULT_BUFFER_TOO_SMALL) check(rc);
    std::string out(n + 1, '\0');
    check(swb_value_copy_str(&v_, out.data(), out.size(), &n));
    out.resize(n);
    return out;
  }
  /// Whether this string's text, unescaped, equals s.
  bool str_eq(std::string_view s) const {
    bool eq = false;
    check(swb_value_str_eq(&v_, s.data(), s.size(), &eq));
    return eq;
  }
  /// The member called key (compared after unescaping); nullopt if there is none.
  std::optional<Value> find(std::string_view key) const {
    swb_value m{};
    swb_result rc = swb_value_get(&v_, key.data(), key.size(), &m);
    if (rc == SWB_RESULT_NOT_FOUND) return std::nullopt;
    check(rc);
    return Value(m);
  }
  /// The member called key; throws Error (SWB_RESULT_NOT_FOUND, detail "missing field
  /// `key`", as serde words it on the Rust path) if there is none.
  Value operator[](std::string_view key) const {
    swb_value m{};
    swb_result rc = swb_value_get(&v_, key.data(), key.size(), &m);
    if (rc == SWB_RESULT_NOT_FOUND) {
      throw Error(rc, "missing field `" + std::string(key) + "`");
    }
    check(rc);
    return Value(m);
  }
  /// The element at index; throws Error (SWB_RESULT_INDEX_OUT_OF_RANGE, detail
  /// "missing element N") past the end.
  Value operator[](std::size_t index) const {
    swb_value e{};
    swb_result rc = swb_value_index(&v_, index, &e);
    if (rc == SWB_RESULT_INDEX_OUT_OF_RANGE) {
      throw Error(rc, "missing element " + std::to_string(index));
    }
    check(rc);
    return Value(e);
  }
  /// The number of elements or members.
  std::size_t size() const {
    std::size_t n = 0;
    check(swb_value_count(&v_, &n));
    return n;
  }
  /// Iteration: `for (const auto& m : value)`, m.key (absent for arrays) and m.value.
  inline ValueIterator begin() const;
  inline ValueIterator end() const noexcept;
  const swb_value& raw() const noexcept { return v_; }

 private:
  swb_value v_;
};

/// A member of an object (key: a string Value) or an element of an array (key absent).
struct Member {
  Value key;
  Value value;
};

/// Walks the elements of an array or the members of an object (an input iterator;
/// compare only with the end, `Value::end()`). Valid during the handler only.
class ValueIterator {
 public:
  ValueIterator() noexcept = default;  // the end
  explicit ValueIterator(const swb_value& container) : done_(false) {
    check(swb_value_iterate(&container, &it_));
    ++*this;
  }
  const Member& operator*() const noexcept { return cur_; }
  const Member* operator->() const noexcept { return &cur_; }
  ValueIterator& operator++() {
    swb_value k{}, v{};
    swb_result rc = swb_value_iter_next(&it_, &k, &v);
    if (rc == SWB_RESULT_ITER_END) {
      done_ = true;
    } else {
      check(rc);
      cur_ = Member{Value(k), Value(v)};
    }
    return *this;
  }
  bool operator==(const ValueIterator& o) const noexcept { return done_ == o.done_; }
  bool operator!=(const ValueIterator& o) const noexcept { return done_ != o.done_; }

 private:
  swb_value_iter it_{};
  Member cur_;
  bool done_ = true;
};

inline ValueIterator Value::begin() const { return ValueIterator(v_); }
inline ValueIterator Value::end() const noexcept { return ValueIterator(); }

/// One call, as a handler sees it (views valid during the handler only).
class Call {
 public:
  explicit Call(const swb_call* c) noexcept : c_(c) {}
  std::string_view method() const noexcept { return view(c_->method); }
  /// The id's exact JSON bytes; empty for a notification.
  std::string_view id() const noexcept { return view(c_->id); }
  /// The params' exact JSON bytes; empty when absent or null.
  std::string_view params() const noexcept { return view(c_->params); }
  /// The params as a Value to read in place: an array, an object, or absent.
  Value params_value() const {
    swb_value v{};
    check(swb_call_params(c_, &v));
    return Value(v);
  }
  bool is_notification() const noexcept { return c_->is_notification; }

 private:
  const swb_call* c_;
};

/// Where a handler writes its result (once). Each method throws Error on failure
/// (invalid JSON, NaN, invalid UTF-8, a second answer, SWB_RESULT_WRITER_STATE for a
/// value where a key is due or an unmatched end).
///
/// Objects and arrays are built value by value, every key and string escaped, so a
/// handler never builds JSON by hand:
///
///   out.begin_object();
///   out.key("name"); out.string(user_text);       // quotes, \n, ... escaped
///   out.key("tags"); out.begin_array(); out.int64(1); out.end_array();
///   out.end_object();                             // {"name":"...","tags":[1]}
///
/// Inside an array or object each scalar writer appends the next value; the outermost
/// end makes the result. A handler that returns with one still open answers -32603.
class Writer {
 public:
  explicit Writer(swb_writer* w) noexcept : w_(w) {}
  void begin_object() { check(swb_writer_begin_object(w_)); }
  void end_object() { check(swb_writer_end_object(w_)); }
  void begin_array() { check(swb_writer_begin_array(w_)); }
  void end_array() { check(swb_writer_end_array(w_)); }
  /// The next member's key (an object must be open); its value follows.
  void key(std::string_view k) { check(swb_writer_key(w_, k.data(), k.size())); }
  void raw_json(std::string_view json) { check(swb_writer_raw_json(w_, json.data(), json.size())); }
  void null() { check(swb_writer_null(w_)); }
  void boolean(bool v) { check(swb_writer_bool(w_, v)); }
  void int64(std::int64_t v) { check(swb_writer_int64(w_, v)); }
  void uint64(std::uint64_t v) { check(swb_writer_uint64(w_, v)); }
  void number(double v) { check(swb_writer_double(w_, v)); }
  void string(std::string_view s) { check(swb_writer_string(w_, s.data(), s.size())); }
  void error(std::int32_t code, std::string_view message, std::string_view data = {}) {
    check(swb_writer_error(w_, code, message.data(), message.size(), data.data(), data.size()));
  }
  /// -32602 Invalid params with detail in data (as the Rust typed path words it).
  void invalid_params(std::string_view detail) {
    check(swb_writer_invalid_params(w_, detail.data(), detail.size()));
  }
  /// -32603 Internal error with detail in data.
  void handler_failed(std::string_view detail) {
    check(swb_writer_handler_failed(w_, detail.data(), detail.size()));
  }

 private:
  swb_writer* w_;
};

/// A method handler: writes its result through the Writer (nothing written: null);
/// throws RpcError to answer that error; an Error from reading params (a Value of the
/// wrong kind, a number that does not fit, a missing member or element) answers
/// -32602 Invalid params with its detail in data ("missing field `minuend`"); any
/// other exception answers -32603 Internal error with its what() in data's "detail".
using Handler = std::function<void(const Call&, Writer&)>;
/// A notification handler (never answered). Exceptions are swallowed.
using NotificationHandler = std::function<void(const Call&)>;

namespace detail {
/// Whether a failed call's code comes from reading params (a Value).
inline bool is_params_error(swb_result rc) noexcept {
  return rc == SWB_RESULT_WRONG_KIND || rc == SWB_RESULT_NOT_REPRESENTABLE ||
         rc == SWB_RESULT_NOT_FOUND || rc == SWB_RESULT_INDEX_OUT_OF_RANGE;
}
inline int call_handler(void* ud, const swb_call* call, swb_writer* w) noexcept {
  Writer writer(w);
  try {
    (*static_cast<Handler*>(ud))(Call(call), writer);
    return 0;
  } catch (const RpcError& e) {
    // Should the error itself be refused (data not JSON), the call gets -32603.
    swb_writer_error(w, e.code(), e.message().data(), e.message().size(), e.data().data(),
                     e.data().size());
    return 1;
  } catch (const Error& e) {
    // A params read that failed: -32602; any other failed call: -32603. Either way
    // with the detail in data (escaped by the library); an error already written
    // stands (these then return SWB_RESULT_ALREADY_ANSWERED).
    std::string_view detail = e.detail();
    if (is_params_error(e.code())) {
      swb_writer_invalid_params(w, detail.data(), detail.size());
    } else {
      swb_writer_handler_failed(w, detail.data(), detail.size());
    }
    return 1;
  } catch (const std::exception& e) {
    std::string_view detail = e.what();
    if (swb_writer_handler_failed(w, detail.data(), detail.size()) == SWB_RESULT_INVALID_UTF8) {
      swb_writer_handler_failed(w, "the handler threw an exception", 30);
    }
    return 1;
  } catch (...) {
    return 1;  // -32603 Internal error (an error already written stands)
  }
}
inline void call_notification(void* ud, const swb_call* call) noexcept {
  try {
    (*static_cast<NotificationHandler*>(ud))(Call(call));
  } catch (...) {
  }
}
inline void free_handler(void* ud) noexcept { delete static_cast<Handler*>(ud); }
inline void free_notification(void* ud) noexcept { delete static_cast<NotificationHandler*>(ud); }
}  // namespace detail

class Router;

/// Registers methods; build() turns it into a Router.
class RouterBuilder {
 public:
  RouterBuilder() { check(swb_router_builder_new(&b_)); }
  ~RouterBuilder() { swb_router_builder_free(b_); }
  RouterBuilder(const RouterBuilder&) = delete;
  RouterBuilder& operator=(const RouterBuilder&) = delete;
  RouterBuilder(RouterBuilder&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
  RouterBuilder& operator=(RouterBuilder&& o) noexcept {
    std::swap(b_, o.b_);
    return *this;
  }

  RouterBuilder& method(std::string_view name, Handler h) {
    auto* ud = new Handler(std::move(h));
    swb_result rc = swb_router_builder_method(b_, name.data(), name.size(), detail::call_handler, ud,
                                              detail::free_handler);
    if (rc != SWB_RESULT_OK) {
      delete ud;  // not taken over on failure
      throw Error(rc);
    }
    return *this;
  }

  RouterBuilder& notification(std::string_view name, NotificationHandler h) {
    auto* ud = new NotificationHandler(std::move(h));
    swb_result rc = swb_router_builder_notification(b_, name.data(), name.size(),
                                                    detail::call_notification, ud,
                                                    detail::free_notification);
    if (rc != SWB_RESULT_OK) {
      delete ud;
      throw Error(rc);
    }
    return *this;
  }

  RouterBuilder& config(const Config& c) {
    check(swb_router_builder_set_config(b_, c.get()));
    return *this;
  }

  RouterBuilder& title(std::string_view t) {
    check(swb_router_builder_set_title(b_, t.data(), t.size()));
    return *this;
  }

  /// Builds the router; the builder is consumed (empty) afterwards, even on failure.
  Router build();

 private:
  swb_router_builder* b_ = nullptr;
};

/// The built router: immutable; copies are references to the same router.
class Router {
 public:
  Router(const Router& o) { check(swb_router_clone(o.r_, &r_)); }
  Router& operator=(const Router& o) {
    Router copy(o);
    std::swap(r_, copy.r_);
    return *this;
  }
  Router(Router&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Router& operator=(Router&& o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  ~Router() { swb_router_free(r_); }
  const swb_router* get() const noexcept { return r_; }

 private:
  friend class RouterBuilder;
  explicit Router(const swb_router* r) noexcept : r_(r) {}
  const swb_router* r_ = nullptr;
};

inline Router RouterBuilder::build() {
  const swb_router* r = nullptr;
  check(swb_router_builder_build(std::exchange(b_, nullptr), &r));
  return Router(r);
}

/// Handles whole messages (one thread at a time; one per thread or connection).
class Session {
 public:
  explicit Session(const Router& r) { check(swb_session_new(r.get(), &s_)); }
  ~Session() { swb_session_free(s_); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Session& operator=(Session&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }

  /// The response bytes (valid until the next call on this session), or nothing to send.
  std::optional<std::string_view> handle(std::string_view input) {
    const std::uint8_t* out = nullptr;
    std::size_t n = 0;
    check(swb_session_handle(s_, reinterpret_cast<const std::uint8_t*>(input.data()), input.size(),
                             &out, &n));
    if (n == 0) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(out), n);
  }

  std::uint64_t dropped_responses() const {
    std::uint64_t n = 0;
    check(swb_session_dropped_responses(s_, &n));
    return n;
  }

 private:
  swb_session* s_ = nullptr;
};

/// A classified message or batch element (views valid until the next classify).
class Message {
 public:
  explicit Message(const swb_message& m) noexcept : m_(m) {}
  swb_kind kind() const noexcept { return m_.kind; }
  bool is_request() const noexcept { return m_.kind == SWB_KIND_REQUEST; }
  bool is_notification() const noexcept { return m_.kind == SWB_KIND_NOTIFICATION; }
  bool is_response() const noexcept { return m_.kind == SWB_KIND_RESPONSE; }
  bool is_batch() const noexcept { return m_.kind == SWB_KIND_BATCH; }
  bool is_error() const noexcept { return m_.kind == SWB_KIND_ERROR; }
  std::string_view method() const noexcept { return view(m_.method); }
  bool method_exact() const noexcept { return m_.method_exact; }
  std::string_view id() const noexcept { return view(m_.id); }
  std::string_view params() const noexcept { return view(m_.params); }
  std::string_view response_result() const noexcept { return view(m_.response_result); }
  std::string_view response_error() const noexcept { return view(m_.response_error); }
  std::size_t batch_len() const noexcept { return m_.batch_len; }
  std::int32_t error_code() const noexcept { return m_.error_code; }
  std::string_view error_message() const noexcept { return view(m_.error_message); }
  std::string_view error_reason() const noexcept { return view(m_.error_reason); }
  std::string_view error_field() const noexcept { return view(m_.error_field); }
  std::string_view error_data() const noexcept { return view(m_.error_data); }
  std::string_view error_response() const noexcept { return view(m_.error_response); }
  const swb_message& raw() const noexcept { return m_; }

 private:
  swb_message m_;
};

/// The classifier on its own (one thread at a time).
class Classifier {
 public:
  Classifier() { check(swb_classifier_new(nullptr, &c_)); }
  explicit Classifier(const Config& cfg) { check(swb_classifier_new(cfg.get(), &c_)); }
  ~Classifier() { swb_classifier_free(c_); }
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;
  Classifier(Classifier&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  Classifier& operator=(Classifier&& o) noexcept {
    std::swap(c_, o.c_);
    return *this;
  }

  Message classify(std::string_view input) {
    swb_message m;
    check(swb_classifier_classify(c_, reinterpret_cast<const std::uint8_t*>(input.data()),
                                  input.size(), &m));
    return Message(m);
  }

  /// The index-th element of the last batch classified.
  Message at(std::size_t index) {
    swb_message m;
    check(swb_classifier_batch_get(c_, index, &m));
    return Message(m);
  }

 private:
  swb_classifier* c_ = nullptr;
};

}  // namespace switchboard

#endif  // SWITCHBOARD_HPP
