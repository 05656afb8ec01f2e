/* Reading params inside C callbacks with swb_call_params and the swb_value_*
 * readers: every reader on every kind, integer and double rules, unescaping
 * (\u00e9, surrogate pairs, \n, a lone surrogate), buffers too small, lookups that
 * miss, iteration of nested arrays and objects, absent and null params, values
 * kept after their callback or made up, and NULL pointers. */
#include <stdint.h>

#include "harness.h"

/* The test body run inside the callback (a struct: C forbids casting a function
 * pointer to void *). */
struct body {
  void (*fn)(const swb_call *call);
};

static int run_body(void *ud, const swb_call *call, swb_writer *w) {
  ((const struct body *)ud)->fn(call);
  return (int)swb_writer_null(w);
}

/* Calls fn inside the callback of a request to "p" with these params (NULL: none). */
static void in_callback(const char *params, void (*fn)(const swb_call *)) {
  struct body body;
  swb_router_builder *b;
  const swb_router *r;
  swb_session *s;
  char msg[1024];
  body.fn = fn;
  if (params)
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"params\":%s,\"id\":1}", params);
  else
    snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"method\":\"p\",\"id\":1}");
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "p", 1, run_body, &body, NULL));
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK_OK(swb_session_new(r, &s));
  CHECK_HANDLE(s, msg, "{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":1}");
  swb_session_free(s);
  swb_router_free(r);
}

static swb_value params_of(const swb_call *call) {
  swb_value v;
  memset(&v, 0xAB, sizeof v);
  CHECK_OK(swb_call_params(call, &v));
  return v;
}

static swb_value at(const swb_value *array, size_t i) {
  swb_value v;
  memset(&v, 0, sizeof v);
  CHECK_OK(swb_value_index(array, i, &v));
  return v;
}

/* ---- every reader on every kind ---- */

#define OK SWB_RESULT_OK
#define WK SWB_RESULT_WRONG_KIND
#define NR SWB_RESULT_NOT_REPRESENTABLE
#define SE SWB_RESULT_STRING_ESCAPED
#define NF SWB_RESULT_NOT_FOUND
#define IR SWB_RESULT_INDEX_OUT_OF_RANGE

struct expect {
  const char *json;
  uint32_t kind;
  uint32_t bool_rc;
  int bool_v;
  uint32_t i64_rc;
  int64_t i64_v;
  uint32_t u64_rc;
  uint64_t u64_v;
  uint32_t f64_rc;
  double f64_v;
  uint32_t plain_rc;
  uint32_t copy_rc;
  const char *text; /* the unescaped text of a string */
  uint32_t count_rc;
  size_t count;
  uint32_t get_rc;   /* get "a" */
  uint32_t index_rc; /* index 0 */
  uint32_t iter_rc;
};

static const struct expect KINDS[] = {
    {"null", SWB_VALUE_KIND_NULL, WK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"true", SWB_VALUE_KIND_BOOL, OK, 1, WK, 0, WK, 0, WK, 0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"false", SWB_VALUE_KIND_BOOL, OK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"0", SWB_VALUE_KIND_NUMBER, WK, 0, OK, 0, OK, 0, OK, 0.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"-7", SWB_VALUE_KIND_NUMBER, WK, 0, OK, -7, NR, 0, OK, -7.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"-0", SWB_VALUE_KIND_NUMBER, WK, 0, OK, 0, NR, 0, OK, -0.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"1.0", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, OK, 1.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"1e2", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, OK, 100.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"-0.5", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, OK, -0.5, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"9223372036854775807", SWB_VALUE_KIND_NUMBER, WK, 0, OK, INT64_MAX, OK, 9223372036854775807ULL, OK,
     9223372036854775807.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"9223372036854775808", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, OK, 9223372036854775808ULL, OK,
     9223372036854775808.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"-9223372036854775808", SWB_VALUE_KIND_NUMBER, WK, 0, OK, INT64_MIN, NR, 0, OK,
     -9223372036854775808.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"-9223372036854775809", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, OK, -9223372036854775808.0,
     WK, WK, NULL, WK, 0, WK, WK, WK},
    {"18446744073709551615", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, OK, UINT64_MAX, OK,
     18446744073709551615.0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"18446744073709551616", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, OK, 18446744073709551616.0,
     WK, WK, NULL, WK, 0, WK, WK, WK},
    {"1e400", SWB_VALUE_KIND_NUMBER, WK, 0, NR, 0, NR, 0, NR, 0, WK, WK, NULL, WK, 0, WK, WK, WK},
    {"\"\"", SWB_VALUE_KIND_STRING, WK, 0, WK, 0, WK, 0, WK, 0, OK, OK, "", WK, 0, WK, WK, WK},
    {"\"a\"", SWB_VALUE_KIND_STRING, WK, 0, WK, 0, WK, 0, WK, 0, OK, OK, "a", WK, 0, WK, WK, WK},
    {"\"caf\\u00e9\"", SWB_VALUE_KIND_STRING, WK, 0, WK, 0, WK, 0, WK, 0, SE, OK, "caf\xc3\xa9", WK, 0,
     WK, WK, WK},
    {"[]", SWB_VALUE_KIND_ARRAY, WK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, OK, 0, WK, IR, OK},
    {"[1,[2,3],{\"a\":4}]", SWB_VALUE_KIND_ARRAY, WK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, OK, 3, WK,
     OK, OK},
    {"{}", SWB_VALUE_KIND_OBJECT, WK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, OK, 0, NF, WK, OK},
    {"{\"b\":[1],\"a\":{\"x\":null}}", SWB_VALUE_KIND_OBJECT, WK, 0, WK, 0, WK, 0, WK, 0, WK, WK, NULL, OK,
     2, OK, WK, OK},
};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])

/* Checks every reader on v against e (e->json NULL: the absent value). */
static void check_readers(const swb_value *v, const struct expect *e) {
  bool b = 0;
  int64_t i = 42;
  uint64_t u = 42;
  double d = 42.0;
  swb_slice s = {NULL, 0};
  char buf[64];
  size_t n = 4242;
  swb_value m;
  swb_value_iter it;
  const char *what = e->json ? e->json : "(absent)";
  memset(&m, 0, sizeof m);
  CHECK(v->kind == e->kind);
  CHECK_RC(swb_value_as_bool(v, &b), e->bool_rc);
  CHECK(b == (e->bool_rc == OK && e->bool_v));
  CHECK_RC(swb_value_as_int64(v, &i), e->i64_rc);
  CHECK(i == (e->i64_rc == OK ? e->i64_v : 42));
  CHECK_RC(swb_value_as_uint64(v, &u), e->u64_rc);
  CHECK(u == (e->u64_rc == OK ? e->u64_v : 42));
  CHECK_RC(swb_value_as_double(v, &d), e->f64_rc);
  CHECK(d == (e->f64_rc == OK ? e->f64_v : 42.0));
  CHECK_RC(swb_value_as_plain_str(v, &s), e->plain_rc);
  if (e->plain_rc == OK) CHECK(slice_eq(s, e->text));
  CHECK_RC(swb_value_copy_str(v, buf, sizeof buf, &n), e->copy_rc);
  if (e->copy_rc == OK) CHECK(n == strlen(e->text) && strcmp(buf, e->text) == 0);
  else CHECK(n == 4242);
  CHECK_RC(swb_value_str_eq(v, "a", 1, &b), e->copy_rc);
  CHECK_RC(swb_value_count(v, &n), e->count_rc);
  if (e->count_rc == OK) CHECK(n == e->count);
  CHECK_RC(swb_value_get(v, "a", 1, &m), e->get_rc);
  CHECK_RC(swb_value_index(v, 0, &m), e->index_rc);
  CHECK_RC(swb_value_iterate(v, &it), e->iter_rc);
  if (harness_failures) fprintf(stderr, "  (after checking %s)\n", what);
}

static void kinds_body(const swb_call *call) {
  swb_value p = params_of(call);
  size_t i, n = 0;
  swb_value v;
  CHECK(p.kind == SWB_VALUE_KIND_ARRAY);
  CHECK_OK(swb_value_count(&p, &n));
  CHECK(n == N_KINDS);
  CHECK(bytes_starts_with(p.json.ptr, p.json.len, "[null, true"));
  for (i = 0; i < N_KINDS; i++) {
    v = at(&p, i);
    CHECK(bytes_eq(v.json.ptr, v.json.len, KINDS[i].json));
    check_readers(&v, &KINDS[i]);
  }
  memset(&v, 0x5A, sizeof v);
  CHECK_RC(swb_value_index(&p, N_KINDS, &v), SWB_RESULT_INDEX_OUT_OF_RANGE);
  CHECK(v.json.len == 0x5A5A5A5A5A5A5A5AULL); /* untouched */
}

static void every_reader_on_every_kind(void) {
  char params[2048] = "[";
  size_t i;
  for (i = 0; i < N_KINDS; i++) {
    if (i) strcat(params, ", ");
    strcat(params, KINDS[i].json);
  }
  strcat(params, "]");
  in_callback(params, kinds_body);
}

/* ---- absent and null params ---- */

static void absent_body(const swb_call *call) {
  static const struct expect absent = {NULL, SWB_VALUE_KIND_ABSENT, WK, 0, WK, 0, WK, 0, WK, 0,
                                       WK, WK, NULL, WK, 0, WK, WK, WK};
  swb_value p = params_of(call);
  swb_value zero;
  CHECK(p.kind == SWB_VALUE_KIND_ABSENT && p.json.ptr == NULL && p.json.len == 0);
  check_readers(&p, &absent);
  memset(&zero, 0, sizeof zero); /* a zeroed swb_value is the absent value */
  check_readers(&zero, &absent);
}

static void absent_and_null_params(void) {
  in_callback(NULL, absent_body);
  in_callback("null", absent_body);
}

/* ---- strings: unescaping and buffer sizes ---- */

static const char *const STR_JSON[] = {
    "\"caf\\u00e9\"", "\"\\ud83d\\ude00 clef \\ud834\\udd1e\"", "\"a\\nb\\t\\\"q\\\" \\\\ \\/\"",
    "\"plain text\"", "\"lone \\ud800!\"", "\"\"", "\"\xc3\xa9t\xc3\xa9\"",
};
static const char *const STR_TEXT[] = {
    "caf\xc3\xa9", "\xf0\x9f\x98\x80 clef \xf0\x9d\x84\x9e", "a\nb\t\"q\" \\ /",
    "plain text", "lone \xef\xbf\xbd!", "", "\xc3\xa9t\xc3\xa9",
};
#define N_STR (sizeof STR_JSON / sizeof STR_JSON[0])

static void strings_body(const swb_call *call) {
  swb_value p = params_of(call);
  size_t i, len, k;
  for (i = 0; i < N_STR; i++) {
    swb_value v = at(&p, i);
    const char *want = STR_TEXT[i];
    size_t wn = strlen(want);
    int plain = strchr(STR_JSON[i], '\\') == NULL;
    swb_slice s = {NULL, 0};
    bool eq = 0;
    size_t n;
    char buf[80];
    CHECK(v.kind == SWB_VALUE_KIND_STRING);
    CHECK(bytes_eq(v.json.ptr, v.json.len, STR_JSON[i]));
    /* every size: too small (the length reported, nothing written), or exact text + NUL */
    for (len = 0; len <= wn + 2; len++) {
      memset(buf, '#', sizeof buf);
      n = 9999;
      if (len <= wn) {
        CHECK_RC(swb_value_copy_str(&v, buf, len, &n), SWB_RESULT_BUFFER_TOO_SMALL);
        CHECK(n == wn);
        for (k = 0; k < sizeof buf; k++) CHECK(buf[k] == '#');
      } else {
        CHECK_OK(swb_value_copy_str(&v, buf, len, &n));
        CHECK(n == wn && memcmp(buf, want, wn) == 0 && buf[wn] == 0);
        for (k = len; k < sizeof buf; k++) CHECK(buf[k] == '#');
      }
    }
    /* the size alone: NULL and 0 */
    n = 9999;
    CHECK_RC(swb_value_copy_str(&v, NULL, 0, &n), SWB_RESULT_BUFFER_TOO_SMALL);
    CHECK(n == wn);
    /* borrowed when there is no escape */
    CHECK_RC(swb_value_as_plain_str(&v, &s), plain ? SWB_RESULT_OK : SWB_RESULT_STRING_ESCAPED);
    if (plain) CHECK(bytes_eq(s.ptr, s.len, want));
    /* compared after unescaping (a lone surrogate equals no text) */
    CHECK_OK(swb_value_str_eq(&v, want, wn, &eq));
    CHECK(eq == (i != 4));
    if (wn > 0 && (unsigned char)want[wn - 1] < 0x80) {
      CHECK_OK(swb_value_str_eq(&v, want, wn - 1, &eq));
      CHECK(!eq);
    } else if (wn > 0) { /* half a character: not UTF-8 */
      CHECK_RC(swb_value_str_eq(&v, want, wn - 1, &eq), SWB_RESULT_INVALID_UTF8);
    }
  }
  {
    /* \u0000 is a NUL inside the text: the length tells */
    swb_value v = at(&p, N_STR);
    char buf[8];
    size_t n = 0;
    CHECK_OK(swb_value_copy_str(&v, buf, sizeof buf, &n));
    CHECK(n == 3 && memcmp(buf, "a\0b", 4) == 0);
  }
}

static void strings_unescaped_into_every_buffer_size(void) {
  char params[1024] = "[";
  size_t i;
  for (i = 0; i < N_STR; i++) {
    strcat(params, STR_JSON[i]);
    strcat(params, ",");
  }
  strcat(params, "\"a\\u0000b\"]");
  in_callback(params, strings_body);
}

/* ---- lookups ---- */

static swb_result get(const swb_value *o, const char *key, swb_value *out) {
  return swb_value_get(o, key, strlen(key), out);
}

static void lookup_body(const swb_call *call) {
  swb_value p = params_of(call);
  swb_value v, w, x;
  int64_t i = 0;
  size_t n = 0;
  memset(&v, 0, sizeof v);
  memset(&w, 0, sizeof w);
  memset(&x, 0, sizeof x);
  CHECK(p.kind == SWB_VALUE_KIND_OBJECT);
  CHECK_OK(swb_value_count(&p, &n));
  CHECK(n == 4);
  CHECK_OK(get(&p, "minuend", &v));
  CHECK_OK(swb_value_as_int64(&v, &i));
  CHECK(i == 42);
  /* the key is escaped in the JSON: compared after unescaping */
  CHECK_OK(get(&p, "subtrahend", &v));
  CHECK_OK(swb_value_as_int64(&v, &i));
  CHECK(i == 23);
  CHECK_OK(get(&p, "\xc3\xa9t\xc3\xa9", &v));
  CHECK(bytes_eq(v.json.ptr, v.json.len, "true"));
  /* misses: a prefix, a longer name, the escaped spelling, empty, another case */
  memset(&v, 0x77, sizeof v);
  CHECK_RC(get(&p, "minuen", &v), SWB_RESULT_NOT_FOUND);
  CHECK_RC(get(&p, "minuendx", &v), SWB_RESULT_NOT_FOUND);
  CHECK_RC(get(&p, "su\\u0062trahend", &v), SWB_RESULT_NOT_FOUND);
  CHECK_RC(get(&p, "", &v), SWB_RESULT_NOT_FOUND);
  CHECK_RC(get(&p, "Minuend", &v), SWB_RESULT_NOT_FOUND);
  CHECK_RC(get(&p, "a", &v), SWB_RESULT_NOT_FOUND); /* only inside a nested object */
  CHECK(v.json.len == 0x7777777777777777ULL);
  CHECK_RC(swb_value_get(&p, "\xff", 1, &v), SWB_RESULT_INVALID_UTF8);
  /* nested: nested.list[2].a, nested.list[1][1] */
  CHECK_OK(get(&p, "nested", &v));
  CHECK(bytes_eq(v.json.ptr, v.json.len, "{\"list\":[1,[2,3],{\"a\":\"v\"}]}"));
  CHECK_OK(get(&v, "list", &w));
  CHECK(w.kind == SWB_VALUE_KIND_ARRAY);
  CHECK_OK(swb_value_index(&w, 2, &x));
  CHECK_OK(get(&x, "a", &x));
  CHECK(bytes_eq(x.json.ptr, x.json.len, "\"v\""));
  CHECK_OK(swb_value_index(&w, 1, &x));
  CHECK_OK(swb_value_index(&x, 1, &x));
  CHECK_OK(swb_value_as_int64(&x, &i));
  CHECK(i == 3);
  CHECK_RC(swb_value_index(&w, 3, &x), SWB_RESULT_INDEX_OUT_OF_RANGE);
  CHECK_RC(swb_value_index(&w, (size_t)-1, &x), SWB_RESULT_INDEX_OUT_OF_RANGE);
  CHECK_RC(get(&w, "list", &x), SWB_RESULT_WRONG_KIND);
  CHECK_RC(swb_value_index(&v, 0, &x), SWB_RESULT_WRONG_KIND);
}

static void lookups_by_key_and_index(void) {
  in_callback(
      "{\"minuend\": 42, \"su\\u0062trahend\": 23, \"nested\": {\"list\":[1,[2,3],{\"a\":\"v\"}]},"
      " \"\\u00e9t\\u00e9\": true}",
      lookup_body);
}

/* ---- iteration of nested arrays and objects ---- */

/* Renders v as compact JSON through the readers alone; keys copied unescaped
 * (re-escaping only " and \). */
static void render(const swb_value *v, char *out, size_t cap) {
  swb_value_iter it;
  swb_value k, e;
  swb_result rc;
  size_t count = 0, n = 0, seen = 0;
  int object = v->kind == SWB_VALUE_KIND_OBJECT;
  if (v->kind != SWB_VALUE_KIND_ARRAY && !object) {
    strncat(out, (const char *)v->json.ptr, v->json.len);
    return;
  }
  CHECK_OK(swb_value_count(v, &count));
  CHECK_OK(swb_value_iterate(v, &it));
  strcat(out, object ? "{" : "[");
  while ((rc = swb_value_iter_next(&it, &k, &e)) == SWB_RESULT_OK) {
    if (seen++) strcat(out, ",");
    if (object) {
      char name[64];
      size_t i;
      CHECK(k.kind == SWB_VALUE_KIND_STRING);
      CHECK_OK(swb_value_copy_str(&k, name, sizeof name, &n));
      strcat(out, "\"");
      for (i = 0; i < n; i++) {
        char c[3] = {'\\', name[i], 0};
        strcat(out, (name[i] == '"' || name[i] == '\\') ? c : c + 1);
      }
      strcat(out, "\":");
    } else {
      CHECK(k.kind == SWB_VALUE_KIND_ABSENT && k.json.len == 0);
    }
    render(&e, out, cap);
  }
  CHECK_RC(rc, SWB_RESULT_ITER_END);
  CHECK(seen == count);
  /* the end repeats, writes nothing; the key may be NULL */
  memset(&e, 0x11, sizeof e);
  CHECK_RC(swb_value_iter_next(&it, NULL, &e), SWB_RESULT_ITER_END);
  CHECK(e.json.len == 0x1111111111111111ULL);
  strcat(out, object ? "}" : "]");
  CHECK(strlen(out) < cap);
}

static void iteration_body(const swb_call *call) {
  swb_value p = params_of(call);
  char out[512] = "";
  swb_value_iter it, copy;
  swb_value e;
  render(&p, out, sizeof out);
  if (strcmp(out,
             "{\"a\":[1,{\"b\":[true,null,[]],\"c\":{}},\"x,]\"],\"k\\\"ey\":{\"d\":{\"e\":[[[-2.5e3]]]}},"
             "\"f\":[{\"g\":\"\\u00e9\"},[]]}") != 0) {
    harness_failures++;
    fprintf(stderr, "rendered %s\n", out);
  }
  harness_checks++;
  /* an iterator copied goes on from the same place */
  CHECK_OK(swb_value_iterate(&p, &it));
  CHECK_OK(swb_value_iter_next(&it, NULL, &e));
  copy = it;
  CHECK_OK(swb_value_iter_next(&copy, NULL, &e));
  CHECK(bytes_starts_with(e.json.ptr, e.json.len, "{\"d\""));
  CHECK_OK(swb_value_iter_next(&it, NULL, &e));
  CHECK(bytes_starts_with(e.json.ptr, e.json.len, "{\"d\""));
  /* scalars cannot be iterated */
  CHECK_OK(get(&p, "a", &e));
  CHECK_OK(swb_value_index(&e, 0, &e));
  CHECK_RC(swb_value_iterate(&e, &it), SWB_RESULT_WRONG_KIND);
}

static void iteration_of_nested_values(void) {
  in_callback(
      "{ \"a\" : [1, {\"b\":[true,null,[ ]],\"c\":{ }}, \"x,]\"] , \"k\\\"ey\" : {\"d\":{\"e\":[[[-2.5e3]]]}},"
      " \"f\":[{\"g\":\"\\u00e9\"},[]] }",
      iteration_body);
}

/* ---- values outside their callback, made up, NULL pointers ---- */

static swb_value kept_value;
static swb_value_iter kept_iter;
static swb_call kept_call;

static void keep_body(const swb_call *call) {
  swb_value p = params_of(call);
  swb_value fake = p;
  size_t n;
  static const uint8_t elsewhere[] = "[1,2]";
  kept_value = p;
  kept_call = *call;
  CHECK_OK(swb_value_iterate(&p, &kept_iter));
  /* the same bytes elsewhere */
  fake.json.ptr = elsewhere;
  CHECK_RC(swb_value_count(&fake, &n), SWB_RESULT_VALUE_NOT_LIVE);
  /* one byte past the params */
  fake = p;
  fake.json.len++;
  CHECK_RC(swb_value_count(&fake, &n), SWB_RESULT_VALUE_NOT_LIVE);
  /* the wrong kind, and a number that is no kind */
  fake = p;
  fake.kind = SWB_VALUE_KIND_OBJECT;
  CHECK_RC(swb_value_count(&fake, &n), SWB_RESULT_VALUE_NOT_LIVE);
  fake.kind = 77;
  CHECK_RC(swb_value_count(&fake, &n), SWB_RESULT_VALUE_NOT_LIVE);
  /* the absent kind with bytes */
  fake.kind = SWB_VALUE_KIND_ABSENT;
  CHECK_RC(swb_value_count(&fake, &n), SWB_RESULT_VALUE_NOT_LIVE);
  CHECK_OK(swb_value_count(&p, &n));
  CHECK(n == 2);
}

static void values_outside_their_callback(void) {
  swb_value v;
  size_t n = 77;
  in_callback("[1,2]", keep_body);
  CHECK_RC(swb_value_count(&kept_value, &n), SWB_RESULT_VALUE_NOT_LIVE);
  CHECK_RC(swb_value_index(&kept_value, 0, &v), SWB_RESULT_VALUE_NOT_LIVE);
  CHECK_RC(swb_value_iter_next(&kept_iter, NULL, &v), SWB_RESULT_VALUE_NOT_LIVE);
  CHECK_RC(swb_call_params(&kept_call, &v), SWB_RESULT_VALUE_NOT_LIVE);
  CHECK(n == 77);
}

static void null_body(const swb_call *call) {
  swb_value p = params_of(call), v;
  swb_value_iter it;
  bool b;
  int64_t i;
  uint64_t u;
  double d;
  swb_slice s;
  char buf[8];
  size_t n;
  CHECK_RC(swb_call_params(NULL, &v), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_call_params(call, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_bool(NULL, &b), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_bool(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_int64(NULL, &i), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_int64(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_uint64(NULL, &u), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_uint64(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_double(NULL, &d), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_double(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_plain_str(NULL, &s), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_as_plain_str(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_copy_str(NULL, buf, sizeof buf, &n), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_copy_str(&p, buf, sizeof buf, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_copy_str(&p, NULL, 4, &n), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_str_eq(NULL, "a", 1, &b), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_str_eq(&p, "a", 1, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_get(NULL, "a", 1, &v), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_get(&p, NULL, 1, &v), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_get(&p, "a", 1, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_get(&p, NULL, 0, &v), SWB_RESULT_NOT_FOUND); /* the empty name */
  CHECK_RC(swb_value_index(NULL, 0, &v), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_index(&p, 0, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_count(NULL, &n), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_count(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_iterate(NULL, &it), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_iterate(&p, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_RC(swb_value_iter_next(NULL, &v, &v), SWB_RESULT_NULL_PARAMETER);
  CHECK_OK(swb_value_iterate(&p, &it));
  CHECK_RC(swb_value_iter_next(&it, &v, NULL), SWB_RESULT_NULL_PARAMETER);
  CHECK_OK(swb_value_iter_next(&it, &v, &v)); /* the iterator did not move */
  CHECK(bytes_eq(v.json.ptr, v.json.len, "\"b\""));
}

static void null_pointers(void) { in_callback("{\"a\":\"b\"}", null_body); }

/* A notification callback reads its params the same way. */
static int64_t notified = 0;
static void notify(void *ud, const swb_call *call) {
  swb_value p, v;
  (void)ud;
  CHECK_OK(swb_call_params(call, &p));
  CHECK_OK(swb_value_get(&p, "n", 1, &v));
  CHECK_OK(swb_value_as_int64(&v, &notified));
}

static void notification_params(void) {
  swb_router_builder *b;
  const swb_router *r;
  swb_session *s;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_notification(b, "n", 1, notify, NULL, NULL));
  CHECK_OK(swb_router_builder_build(b, &r));
  CHECK_OK(swb_session_new(r, &s));
  CHECK_HANDLE(s, "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"n\":-12}}", NULL);
  CHECK(notified == -12);
  swb_session_free(s);
  swb_router_free(r);
}

int main(void) {
  every_reader_on_every_kind();
  absent_and_null_params();
  strings_unescaped_into_every_buffer_size();
  lookups_by_key_and_index();
  iteration_of_nested_values();
  values_outside_their_callback();
  null_pointers();
  notification_params();
  return harness_finish("test_params");
}
