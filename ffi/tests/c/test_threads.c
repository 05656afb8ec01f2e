/* One router shared by 4 threads, each with its own session (and its own router
 * reference, released by the thread): every response is checked, the callbacks run
 * concurrently (the counter is protected by a mutex), and the registration's
 * user_data is freed once, after the last thread released the router. */
#include <pthread.h>
#include <stdint.h>

#include "harness.h"

#define THREADS 4
/* Messages per thread; SWB_THREAD_MESSAGES overrides it (valgrind runs fewer). */
static int MESSAGES = 20000;

struct shared {
  pthread_mutex_t lock;
  long calls;
  int freed;
};

static int add(void *ud, const swb_call *call, swb_writer *w) {
  struct shared *sh = (struct shared *)ud;
  long long a = 0, b = 0;
  /* params are [a,b] with small non-negative integers */
  if (sscanf((const char *)call->params.ptr, "[%lld,%lld]", &a, &b) != 2) return 1;
  pthread_mutex_lock(&sh->lock);
  sh->calls++;
  pthread_mutex_unlock(&sh->lock);
  return (int)swb_writer_int64(w, a + b);
}

static void free_shared(void *ud) {
  struct shared *sh = (struct shared *)ud;
  sh->freed++;
}

struct worker {
  const swb_router *router; /* this thread's own reference */
  int index;
  int failures;
  long handled;
};

static void *work(void *arg) {
  struct worker *wk = (struct worker *)arg;
  swb_session *s = NULL;
  char msg[256], expected[256];
  int i;
  if (swb_session_new(wk->router, &s) != SWB_RESULT_OK) {
    wk->failures++;
    return NULL;
  }
  swb_router_free(wk->router); /* the session holds its own reference */
  for (i = 0; i < MESSAGES; i++) {
    const uint8_t *out = NULL;
    size_t n = 0;
    int len;
    if (i % 5 == 4) {
      /* a batch: two calls and a notification */
      len = snprintf(msg, sizeof msg,
                     "[{\"jsonrpc\":\"2.0\",\"method\":\"add\",\"params\":[%d,%d],\"id\":\"t%d-%d\"},"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"add\",\"params\":[1,1]},"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":%d}]",
                     wk->index, i, wk->index, i, i);
      snprintf(expected, sizeof expected,
               "[{\"jsonrpc\":\"2.0\",\"result\":%d,\"id\":\"t%d-%d\"},"
               "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32601,\"message\":\"Method not found\","
               "\"data\":{\"field\":\"method\",\"reason\":\"is not registered\"}},\"id\":%d}]",
               wk->index + i, wk->index, i, i);
    } else {
      len = snprintf(msg, sizeof msg,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"add\",\"params\":[%d,%d],\"id\":%d}",
                     wk->index, i, i);
      snprintf(expected, sizeof expected, "{\"jsonrpc\":\"2.0\",\"result\":%d,\"id\":%d}",
               wk->index + i, i);
    }
    if (swb_session_handle(s, (const uint8_t *)msg, (size_t)len, &out, &n) != SWB_RESULT_OK ||
        !bytes_eq(out, n, expected)) {
      if (wk->failures++ < 3)
        fprintf(stderr, "thread %d: %s\n  got %.*s\n  expected %s\n", wk->index, msg, (int)n,
                out ? (const char *)out : "(none)", expected);
    }
    wk->handled++;
  }
  swb_session_free(s);
  return NULL;
}

int main(void) {
  struct shared sh;
  swb_router_builder *b = NULL;
  const swb_router *r = NULL;
  pthread_t threads[THREADS];
  struct worker workers[THREADS];
  int i;
  long expected_calls = 0;

  if (getenv("SWB_THREAD_MESSAGES")) MESSAGES = atoi(getenv("SWB_THREAD_MESSAGES"));
  CHECK(MESSAGES >= 5);
  pthread_mutex_init(&sh.lock, NULL);
  sh.calls = 0;
  sh.freed = 0;
  CHECK_OK(swb_router_builder_new(&b));
  CHECK_OK(swb_router_builder_method(b, "add", 3, add, &sh, free_shared));
  CHECK_OK(swb_router_builder_build(b, &r));

  for (i = 0; i < THREADS; i++) {
    workers[i].index = i;
    workers[i].failures = 0;
    workers[i].handled = 0;
    CHECK_OK(swb_router_clone(r, &workers[i].router));
    CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
  }
  swb_router_free(r); /* main's reference: the threads keep the router alive */
  for (i = 0; i < THREADS; i++) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].failures == 0);
    CHECK(workers[i].handled == MESSAGES);
    expected_calls += MESSAGES + MESSAGES / 5; /* one more call per batch */
  }
  CHECK(sh.calls == expected_calls);
  CHECK(sh.freed == 1); /* the last session's free released the router */
  pthread_mutex_destroy(&sh.lock);
  printf("%d threads handled %ld calls\n", THREADS, sh.calls);
  return harness_finish("test_threads");
}
