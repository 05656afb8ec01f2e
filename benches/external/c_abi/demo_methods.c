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
 * arithmetic does not overflow), else a double; a non-finite result is -32602.
 * Bad params get -32602 "Invalid params" with the demo's `data` object.
 *
 * switchboard hands each callback the params' exact bytes, already validated as
 * JSON, so this reads them with a small scanner of its own (no JSON library): that
 * is what a C user of the ABI writes, and it keeps the callback's cost close to
 * the Rust demo's, which reads the same bytes through switchboard's Params view. */
#include "demo_methods.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BALANCE "0x1bdb569fa3c2565cc"

typedef struct {
  const uint8_t *p, *end;
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Consumes `ch` (after whitespace) if it is next. */
static bool eat(cursor *c, uint8_t ch) {
  skip_ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return true;
  }
  return false;
}

/* A string without escapes (the demo's `as_plain_str`): its bytes between the
 * quotes. False for anything else, escaped strings included. */
static bool plain_string(cursor *c, const uint8_t **s, size_t *n) {
  skip_ws(c);
  if (c->p >= c->end || *c->p != '"') return false;
  const uint8_t *start = ++c->p;
  const uint8_t *q = memchr(start, '"', (size_t)(c->end - start));
  if (q == NULL || memchr(start, '\\', (size_t)(q - start)) != NULL) return false;
  *s = start;
  *n = (size_t)(q - start);
  c->p = q + 1;
  return true;
}

/* Any string: its bytes between the quotes, escapes left as they are (still valid
 * JSON string content, so they can be written back verbatim). The closing quote is
 * found with memchr: the first '"' after an even run of backslashes. */
static bool any_string(cursor *c, const uint8_t **s, size_t *n) {
  skip_ws(c);
  if (c->p >= c->end || *c->p != '"') return false;
  const uint8_t *start = c->p + 1, *q = start;
  for (;;) {
    q = memchr(q, '"', (size_t)(c->end - q));
    if (q == NULL) return false;
    const uint8_t *b = q;
    while (b > start && b[-1] == '\\') b--;
    if (((q - b) & 1) == 0) break;
    q++;
  }
  *s = start;
  *n = (size_t)(q - start);
  c->p = q + 1;
  return true;
}

/* Skips one value (the bytes are already validated JSON): strings with their
 * escapes, arrays and objects by depth, scalars up to the next delimiter. */
static bool skip_value(cursor *c) {
  const uint8_t *s;
  size_t n;
  skip_ws(c);
  if (c->p >= c->end) return false;
  if (*c->p == '"') return any_string(c, &s, &n);
  if (*c->p == '[' || *c->p == '{') {
    size_t depth = 0;
    do {
      uint8_t ch = *c->p;
      if (ch == '"') {
        if (!any_string(c, &s, &n)) return false;
        continue;
      }
      if (ch == '[' || ch == '{') depth++;
      else if (ch == ']' || ch == '}') depth--;
      c->p++;
    } while (depth > 0 && c->p < c->end);
    return depth == 0;
  }
  while (c->p < c->end && *c->p != ',' && *c->p != ']' && *c->p != '}' && *c->p != ' ' && *c->p != '\t' &&
         *c->p != '\n' && *c->p != '\r')
    c->p++;
  return true;
}

typedef struct {
  bool is_int;
  int64_t i;
  double f;
} num;

static double as_double(num n) { return n.is_int ? (double)n.i : n.f; }

/* A JSON number (the bytes are already validated): an int64 when it is an integer
 * literal that fits, else a double. False when the next value is not a number. */
static bool number(cursor *c, num *out) {
  skip_ws(c);
  const uint8_t *s = c->p;
  bool neg = c->p < c->end && *c->p == '-';
  if (neg) c->p++;
  if (c->p >= c->end || *c->p < '0' || *c->p > '9') return false;
  uint64_t mag = 0;
  bool fits = true;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    unsigned d = (unsigned)(*c->p - '0');
    if (mag > (UINT64_MAX - d) / 10) fits = false;
    else mag = mag * 10 + d;
    c->p++;
  }
  bool integer = !(c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'));
  if (integer && fits && mag <= (uint64_t)INT64_MAX + (neg ? 1u : 0u)) {
    out->is_int = true;
    out->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
  }
  while (c->p < c->end && ((*c->p >= '0' && *c->p <= '9') || *c->p == '.' || *c->p == 'e' ||
                           *c->p == 'E' || *c->p == '+' || *c->p == '-'))
    c->p++;
  /* strtod needs a NUL-terminated copy. */
  size_t n = (size_t)(c->p - s);
  char small[64];
  char *buf = n < sizeof small ? small : malloc(n + 1);
  if (buf == NULL) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  out->is_int = false;
  out->f = strtod(buf, NULL);
  if (buf != small) free(buf);
  return true;
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

static bool key_is(const uint8_t *k, size_t n, const char *name) {
  return n == strlen(name) && memcmp(k, name, n) == 0;
}

static int demo_subtract(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected [minuend, subtrahend] or {\\\"minuend\\\": number, "
      "\\\"subtrahend\\\": number}, finite numbers\"}";
  (void)ud;
  cursor c = {call->params.ptr, call->params.ptr + call->params.len};
  num a = {true, 0, 0}, b = {true, 0, 0};
  if (eat(&c, '[')) {
    if (!number(&c, &a) || !eat(&c, ',') || !number(&c, &b) || !eat(&c, ']')) return invalid(w, shape);
  } else if (eat(&c, '{')) {
    bool have_a = false, have_b = false;
    int members = 0;
    if (!eat(&c, '}')) {
      do {
        const uint8_t *k;
        size_t kn;
        num v;
        if (!plain_string(&c, &k, &kn) || !eat(&c, ':') || !number(&c, &v)) return invalid(w, shape);
        members++;
        if (key_is(k, kn, "minuend")) a = v, have_a = true;
        else if (key_is(k, kn, "subtrahend")) b = v, have_b = true;
      } while (eat(&c, ','));
      if (!eat(&c, '}')) return invalid(w, shape);
    }
    if (!have_a || !have_b || members != 2) return invalid(w, shape);
  } else {
    return invalid(w, shape);
  }
  num r;
  if (a.is_int && b.is_int) {
    r.is_int = !__builtin_sub_overflow(a.i, b.i, &r.i);
    if (!r.is_int) r.f = (double)a.i - (double)b.i;
  } else {
    r.is_int = false;
    r.f = as_double(a) - as_double(b);
  }
  return write_num(w, r);
}

static int demo_sum(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] = "{\"field\":\"params\",\"reason\":\"expected an array of finite numbers\"}";
  (void)ud;
  cursor c = {call->params.ptr, call->params.ptr + call->params.len};
  num acc = {true, 0, 0};
  if (!eat(&c, '[')) return invalid(w, shape);
  if (!eat(&c, ']')) {
    do {
      num n;
      if (!number(&c, &n)) return invalid(w, shape);
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
    } while (eat(&c, ','));
    if (!eat(&c, ']')) return invalid(w, shape);
  }
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
    if (key_is(s, n, tags[i])) return true;
  return n > 2 && s[0] == '0' && s[1] == 'x' && is_hex(s + 2, n - 2);
}

static int demo_eth_get_balance(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected [address, block]: a 20-byte 0x-hex address and a block "
      "tag or 0x-hex number\"}";
  (void)ud;
  cursor c = {call->params.ptr, call->params.ptr + call->params.len};
  const uint8_t *a, *b;
  size_t an, bn;
  if (!eat(&c, '[') || !plain_string(&c, &a, &an) || !eat(&c, ',') || !plain_string(&c, &b, &bn) ||
      !eat(&c, ']') || !is_hex_address(a, an) || !is_block(b, bn))
    return invalid(w, shape);
  return (int)swb_writer_string(w, BALANCE, sizeof BALANCE - 1);
}

/* tools/call: the tool's name (the first `name` member, a string) and how many
 * members its `arguments` object has (the first `arguments`); other members are
 * ignored. The name goes back as received: escaped names stay escaped, the same
 * JSON string as the Rust handler's re-escaped one. */
static int demo_tools_call(void *ud, const swb_call *call, swb_writer *w) {
  static const char shape[] =
      "{\"field\":\"params\",\"reason\":\"expected {\\\"name\\\": string, \\\"arguments\\\": object}\"}";
  static const char head[] = "{\"content\":[{\"type\":\"text\",\"text\":\"";
  static const char mid[] = "\"}],\"structuredContent\":{\"arguments\":";
  static const char tail[] = "},\"isError\":false}";
  (void)ud;
  cursor c = {call->params.ptr, call->params.ptr + call->params.len};
  const uint8_t *name = NULL;
  size_t name_n = 0;
  long args = -1;
  if (!eat(&c, '{')) return invalid(w, shape);
  if (!eat(&c, '}')) {
    do {
      const uint8_t *k;
      size_t kn;
      if (!any_string(&c, &k, &kn) || !eat(&c, ':')) return invalid(w, shape);
      if (name == NULL && key_is(k, kn, "name")) {
        if (!any_string(&c, &name, &name_n)) return invalid(w, shape);
      } else if (args < 0 && key_is(k, kn, "arguments")) {
        if (!eat(&c, '{')) return invalid(w, shape);
        args = 0;
        if (!eat(&c, '}')) {
          do {
            if (!any_string(&c, &k, &kn) || !eat(&c, ':') || !skip_value(&c)) return invalid(w, shape);
            args++;
          } while (eat(&c, ','));
          if (!eat(&c, '}')) return invalid(w, shape);
        }
      } else if (!skip_value(&c)) {
        return invalid(w, shape);
      }
    } while (eat(&c, ','));
    if (!eat(&c, '}')) return invalid(w, shape);
  }
  if (name == NULL || args < 0) return invalid(w, shape);
  /* The result, built in a buffer: the head, the name, the count, the tail. */
  char small[256];
  size_t cap = sizeof head + name_n + sizeof mid + 24 + sizeof tail;
  char *buf = cap <= sizeof small ? small : malloc(cap);
  if (buf == NULL) return 1;
  size_t n = 0;
  memcpy(buf, head, sizeof head - 1), n += sizeof head - 1;
  memcpy(buf + n, name, name_n), n += name_n;
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
