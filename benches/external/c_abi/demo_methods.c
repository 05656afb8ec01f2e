/* The demo methods of switchboard-server (server/src/demo.rs) as C callbacks on
 * switchboard's C ABI, with the same semantics and the same answers:
 *   subtract [a, b] or {"minuend": a, "subtrahend": b}  -> a - b
 *   sum [n...]                                           -> the total
 *   get_data                                             -> ["hello",5]
 *   eth_getBalance [address, block]                      -> "0x1bdb569fa3c2565cc"
 *   update, notify_hello, notify_sum (notifications)     -> counted
 * and the benches' MCP-style method (benches/src/dispatch.rs, `tools_call`):
 *   tools/call {"name": string, "arguments": object, ...} -> {"content":[{"type":
 *     "text","text":name}],"structuredContent":{"arguments":count},"isError":false}
 * Numbers: an exact integer when the literal is one that fits int64 (and the
 * arithmetic does not overflow), else a double; a number beyond a double's range
 * (1e400) is bad params, a non-finite result is -32602.
 * Bad params get -32602 "Invalid params" with the demo's `data` object.
 *
 * The params are read as a C user of the ABI reads them: in place, through the
 * swb_value readers (swb_call_params, swb_value_iterate / swb_value_iter_next,
 * swb_value_str_eq, swb_value_as_int64 / _as_double / _as_plain_str,
 * swb_value_count), no JSON library and no copy; the same walks as the Rust demo's
 * over switchboard's Params view (the readers are that view behind the ABI). */
#include "demo_methods.h"

#include <stdlib.h>
#include <string.h>

#define BALANCE "0x1bdb569fa3c2565cc"

typedef struct {
  bool is_int;
  int64_t i;
  double f;
} num;

static double as_double(num n) { return n.is_int ? (double)n.i : n.f; }

/* A number as the demo reads it (its `number`): an int64 when the token is an
 * integer that fits, else a double. False for a value that is not a number and for
 * a number beyond a double's range. */
static bool number(const swb_value *v, num *out) {
  if (v->kind != SWB_VALUE_KIND_NUMBER) return false;
  if (swb_value_as_int64(v, &out->i) == SWB_RESULT_OK) {
    out->is_int = true;
    return true;
  }
  out->is_int = false;
  return swb_value_as_double(v, &out->f) == SWB_RESULT_OK;
}

static int invalid(swb_writer *w, const char *data) {
  static const char msg[] = "Invalid params";
  return (int)swb_writer_error(w, -32602, msg, sizeof msg - 1, data, strlen(data));
}

static int write_num(swb_writer *w, num n) {
  if (n.is_int) return (int)swb_writer_int64(w, n.i);
  if (n.f - n.f != 0) /* NaN or infinite */
    return invalid(w, "{\"field\":\"params\",\"reason\":\"the result is not a finite number\"}");
  return (int)swb_writer_double(w, n.f);
}

/* Whether a member's key (a string value) is `name`, compared unescaped. */
static bool key_is(const swb_value *key, const char *name, size_t n) {
  bool eq = false;
  return swb_value_str_eq(key, name, n, &eq) == SWB_RESULT_OK && eq;
}

static int demo_subtract(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected [minuend, subtrahend] or {\\\"minuend\\\": number, "
      "\\\"subtrahend\\\": number}, finite numbers\"}";
  (void)ud;
  swb_value params, a, b, key, v;
  swb_value_iter it;
  if (swb_call_params(call, &params) != SWB_RESULT_OK || swb_value_iterate(&params, &it) != SWB_RESULT_OK)
    return invalid(w, shape); /* absent params included */
  if (params.kind == SWB_VALUE_KIND_ARRAY) {
    /* exactly two elements */
    if (swb_value_iter_next(&it, NULL, &a) != SWB_RESULT_OK || swb_value_iter_next(&it, NULL, &b) != SWB_RESULT_OK ||
        swb_value_iter_next(&it, NULL, &v) != SWB_RESULT_ITER_END)
      return invalid(w, shape);
  } else {
    /* one pass: exactly `minuend` and `subtrahend`, each once, nothing else */
    bool have_a = false, have_b = false;
    swb_result rc;
    while ((rc = swb_value_iter_next(&it, &key, &v)) == SWB_RESULT_OK) {
      if (!have_a && key_is(&key, "minuend", 7)) a = v, have_a = true;
      else if (!have_b && key_is(&key, "subtrahend", 10)) b = v, have_b = true;
      else return invalid(w, shape);
    }
    if (rc != SWB_RESULT_ITER_END || !have_a || !have_b) return invalid(w, shape);
  }
  num x, y, r;
  if (!number(&a, &x) || !number(&b, &y)) return invalid(w, shape);
  if (x.is_int && y.is_int) {
    r.is_int = !__builtin_sub_overflow(x.i, y.i, &r.i);
    if (!r.is_int) r.f = (double)x.i - (double)y.i;
  } else {
    r.is_int = false;
    r.f = as_double(x) - as_double(y);
  }
  return write_num(w, r);
}

static int demo_sum(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] = "{\"field\":\"params\",\"reason\":\"expected an array of finite numbers\"}";
  (void)ud;
  swb_value params, v;
  swb_value_iter it;
  if (swb_call_params(call, &params) != SWB_RESULT_OK || params.kind != SWB_VALUE_KIND_ARRAY ||
      swb_value_iterate(&params, &it) != SWB_RESULT_OK)
    return invalid(w, shape);
  num acc = {true, 0, 0};
  swb_result rc;
  while ((rc = swb_value_iter_next(&it, NULL, &v)) == SWB_RESULT_OK) {
    num n;
    if (!number(&v, &n)) return invalid(w, shape);
    if (acc.is_int && n.is_int) {
      int64_t s;
      if (!__builtin_add_overflow(acc.i, n.i, &s)) {
        acc.i = s;
      } else {
        acc.is_int = false;
        acc.f = (double)acc.i + (double)n.i;
      }
    } else {
      acc.f = as_double(acc) + as_double(n);
      acc.is_int = false;
    }
  }
  if (rc != SWB_RESULT_ITER_END) return invalid(w, shape);
  return write_num(w, acc);
}

static int demo_get_data(void *ud, const swb_call *call, swb_writer *w) {
  static const char data[] = "[\"hello\",5]";
  (void)ud;
  (void)call;
  return (int)swb_writer_raw_json(w, data, sizeof data - 1);
}

/* Branch-free per byte, as the demo's is_hex, written so that the compiler checks
 * many bytes per instruction (an OR reduction it vectorizes at -O3). */
static bool is_hex(const uint8_t *s, size_t n) {
  uint8_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    uint8_t ch = s[i];
    bad |= (uint8_t)((uint8_t)(ch - '0') >= 10) & (uint8_t)((uint8_t)((ch | 0x20) - 'a') >= 6);
  }
  return bad == 0;
}

static bool is_hex_address(const uint8_t *s, size_t n) {
  return n == 42 && s[0] == '0' && s[1] == 'x' && is_hex(s + 2, 40);
}

static bool is_block(const uint8_t *s, size_t n) {
  static const char *const tags[] = {"latest", "earliest", "pending", "safe", "finalized"};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (n == strlen(tags[i]) && memcmp(s, tags[i], n) == 0) return true;
  return n > 2 && s[0] == '0' && s[1] == 'x' && is_hex(s + 2, n - 2);
}

static int demo_eth_get_balance(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected [address, block]: a 20-byte 0x-hex address and a block "
      "tag or 0x-hex number\"}";
  (void)ud;
  swb_value params, a, b, extra;
  swb_value_iter it;
  swb_slice as, bs; /* strings without escapes, borrowed */
  if (swb_call_params(call, &params) != SWB_RESULT_OK || params.kind != SWB_VALUE_KIND_ARRAY ||
      swb_value_iterate(&params, &it) != SWB_RESULT_OK || swb_value_iter_next(&it, NULL, &a) != SWB_RESULT_OK ||
      swb_value_iter_next(&it, NULL, &b) != SWB_RESULT_OK ||
      swb_value_iter_next(&it, NULL, &extra) != SWB_RESULT_ITER_END ||
      swb_value_as_plain_str(&a, &as) != SWB_RESULT_OK || !is_hex_address(as.ptr, as.len) ||
      swb_value_as_plain_str(&b, &bs) != SWB_RESULT_OK || !is_block(bs.ptr, bs.len))
    return invalid(w, shape);
  return (int)swb_writer_string(w, BALANCE, sizeof BALANCE - 1);
}

/* tools/call: the tool's name (the first `name` member, a string) and how many
 * members its `arguments` object has (the first `arguments`, counted by
 * swb_value_count); the walk over the params stops once both are found, as the
 * Rust handler's does. The name goes back as received, its exact JSON string
 * (quotes and escapes as they are): the same string as the Rust handler's
 * re-escaped one. */
static int demo_tools_call(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected {\\\"name\\\": string, \\\"arguments\\\": object}\"}";
  static const char head[] = "{\"content\":[{\"type\":\"text\",\"text\":";
  static const char mid[] = "}],\"structuredContent\":{\"arguments\":";
  static const char tail[] = "},\"isError\":false}";
  (void)ud;
  /* not found yet: absent (a member's value never is) */
  swb_value params, key, v, name = {{NULL, 0}, SWB_VALUE_KIND_ABSENT}, arguments = name;
  swb_value_iter it;
  size_t args;
  if (swb_call_params(call, &params) != SWB_RESULT_OK || params.kind != SWB_VALUE_KIND_OBJECT ||
      swb_value_iterate(&params, &it) != SWB_RESULT_OK)
    return invalid(w, shape);
  while (name.kind == SWB_VALUE_KIND_ABSENT || arguments.kind == SWB_VALUE_KIND_ABSENT) {
    swb_result rc = swb_value_iter_next(&it, &key, &v);
    if (rc == SWB_RESULT_ITER_END) break;
    if (rc != SWB_RESULT_OK) return invalid(w, shape);
    if (name.kind == SWB_VALUE_KIND_ABSENT && key_is(&key, "name", 4)) name = v;
    else if (arguments.kind == SWB_VALUE_KIND_ABSENT && key_is(&key, "arguments", 9)) arguments = v;
  }
  if (name.kind != SWB_VALUE_KIND_STRING || arguments.kind != SWB_VALUE_KIND_OBJECT ||
      swb_value_count(&arguments, &args) != SWB_RESULT_OK)
    return invalid(w, shape);
  /* The result, built in a buffer: the head, the name, the count, the tail. */
  char small[256];
  size_t cap = sizeof head + name.json.len + sizeof mid + 24 + sizeof tail;
  char *buf = cap <= sizeof small ? small : malloc(cap);
  if (buf == NULL) return 1;
  size_t n = 0;
  memcpy(buf, head, sizeof head - 1), n += sizeof head - 1;
  memcpy(buf + n, name.json.ptr, name.json.len), n += name.json.len;
  memcpy(buf + n, mid, sizeof mid - 1), n += sizeof mid - 1;
  char digits[24];
  size_t d = sizeof digits;
  do digits[--d] = (char)('0' + args % 10), args /= 10;
  while (args > 0);
  memcpy(buf + n, digits + d, sizeof digits - d), n += sizeof digits - d;
  memcpy(buf + n, tail, sizeof tail - 1), n += sizeof tail - 1;
  int rc = (int)swb_writer_raw_json(w, buf, n);
  if (buf != small) free(buf);
  return rc;
}

static void demo_count(void *ud, const swb_call *call) {
  (void)call;
  (*(uint64_t *)ud)++;
}

#define TRY(expr)                        \
  do {                                   \
    swb_result rc_ = (expr);             \
    if (rc_ != SWB_RESULT_OK) return rc_; \
  } while (0)

swb_result demo_register(swb_router_builder *b, demo_counters *counters) {
  TRY(swb_router_builder_method(b, "subtract", 8, demo_subtract, NULL, NULL));
  TRY(swb_router_builder_method(b, "sum", 3, demo_sum, NULL, NULL));
  TRY(swb_router_builder_method(b, "get_data", 8, demo_get_data, NULL, NULL));
  TRY(swb_router_builder_method(b, "eth_getBalance", 14, demo_eth_get_balance, NULL, NULL));
  TRY(swb_router_builder_method(b, "tools/call", 10, demo_tools_call, NULL, NULL));
  TRY(swb_router_builder_notification(b, "update", 6, demo_count, &counters->update, NULL));
  TRY(swb_router_builder_notification(b, "notify_hello", 12, demo_count, &counters->hello, NULL));
  TRY(swb_router_builder_notification(b, "notify_sum", 10, demo_count, &counters->sum, NULL));
  /* The same OpenRPC descriptions as the demo, so rpc.discover answers alike. */
  static const char *const schemas[][3] = {
      {"subtract",
       "[{\"name\":\"minuend\",\"schema\":{\"type\":\"number\"}},{\"name\":\"subtrahend\",\"schema\":{\"type\":"
       "\"number\"}}]",
       "{\"name\":\"difference\",\"schema\":{\"type\":\"number\"}}"},
      {"sum", "[{\"name\":\"numbers\",\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}}]",
       "{\"name\":\"total\",\"schema\":{\"type\":\"number\"}}"},
      {"get_data", "[]", "{\"name\":\"data\",\"schema\":{\"type\":\"array\"}}"},
      {"eth_getBalance",
       "[{\"name\":\"address\",\"schema\":{\"type\":\"string\",\"pattern\":\"^0x[0-9a-fA-F]{40}$\"}},{\"name\":"
       "\"block\",\"schema\":{\"type\":\"string\"}}]",
       "{\"name\":\"balance\",\"schema\":{\"type\":\"string\",\"pattern\":\"^0x[0-9a-f]+$\"}}"},
  };
  for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
    TRY(swb_router_builder_schema(b, schemas[i][0], strlen(schemas[i][0]), schemas[i][1], strlen(schemas[i][1]),
                                  schemas[i][2], strlen(schemas[i][2])));
  return SWB_RESULT_OK;
}
