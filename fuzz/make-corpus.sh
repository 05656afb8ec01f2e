#!/usr/bin/env bash
# Builds the fuzz corpora from scratch (they are NOT committed: fuzz/corpus is
# gitignored; only the small fuzz/seeds/ is):
#   - fuzz/seeds/ (the committed copy of what this script writes into seeds/)
#   - the JSONTestSuite files (../shared/data/jsontestsuite/test_parsing, or
#     $SWITCHBOARD_JSONTESTSUITE)
#   - generated batches, deep nesting, long strings and numbers
# into fuzz/corpus/<target>/ for every target.
#
# Usage: fuzz/make-corpus.sh [--seeds-only]
#   --seeds-only  only (re)write fuzz/seeds/ (the small committed seed set)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

suite="${SWITCHBOARD_JSONTESTSUITE:-$here/../../shared/data/jsontestsuite/test_parsing}"
[ -d "$suite/test_parsing" ] && suite="$suite/test_parsing"

seeds="$here/seeds"
mkdir -p "$seeds"

# seed NAME CONTENT: one file, content given with printf escapes.
seed() { printf '%b' "$2" > "$seeds/$1"; }

# --- The JSON-RPC 2.0 specification's examples (section 7) ---
seed spec-positional '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}'
seed spec-positional2 '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}'
seed spec-named '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}'
seed spec-named2 '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}'
seed spec-notification '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}'
seed spec-notification2 '{"jsonrpc": "2.0", "method": "foobar"}'
seed spec-unknown '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}'
seed spec-invalid-json '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]'
seed spec-invalid-request '{"jsonrpc": "2.0", "method": 1, "params": "bar"}'
seed spec-batch-invalid-json '[\n  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n  {"jsonrpc": "2.0", "method"\n]'
seed spec-empty-batch '[]'
seed spec-batch-one '[1]'
seed spec-batch-three '[1,2,3]'
seed spec-batch '[\n {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},\n {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},\n {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},\n {"foo": "boo"},\n {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},\n {"jsonrpc": "2.0", "method": "get_data", "id": "9"}\n]'
seed spec-batch-notifications '[\n {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},\n {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}\n]'

# --- SPEC.md's decisions ---
seed id-bigint '{"jsonrpc":"2.0","method":"sum","params":[1],"id":9007199254740993}'
seed id-float '{"jsonrpc":"2.0","method":"sum","params":[1],"id":1.5}'
seed id-exp '{"jsonrpc":"2.0","method":"sum","params":[1],"id":1e2}'
seed id-neg0 '{"jsonrpc":"2.0","method":"sum","params":[1],"id":-0}'
seed id-escaped '{"jsonrpc":"2.0","method":"sum","params":[1],"id":"a\\u0062\\"c"}'
seed id-null '{"jsonrpc":"2.0","method":"sum","params":[1],"id":null}'
seed id-object '{"jsonrpc":"2.0","method":"sum","id":{"a":1}}'
seed id-array '{"jsonrpc":"2.0","method":"sum","id":[1]}'
seed id-bool '{"jsonrpc":"2.0","method":"sum","id":true}'
seed params-null '{"jsonrpc":"2.0","method":"get_data","params":null,"id":1}'
seed params-string '{"jsonrpc":"2.0","method":"sum","params":"1","id":1}'
seed params-number '{"jsonrpc":"2.0","method":"sum","params":1,"id":1}'
seed dup-method '{"jsonrpc":"2.0","method":"sum","method":"subtract","params":[1,2],"id":1}'
seed dup-escaped-id '{"jsonrpc":"2.0","method":"sum","params":[1],"id":1,"\\u0069d":2}'
seed dup-params-named '{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"minuend":2,"subtrahend":3},"id":1}'
seed extra-members '{"jsonrpc":"2.0","method":"sum","params":[1],"id":1,"x":1,"x":2}'
seed escaped-method '{"jsonrpc":"2.0","method":"su\\u0062tract","params":[42,23],"id":1}'
seed escaped-version '{"\\u006asonrpc":"\\u0032.0","method":"sum","params":[2],"id":1}'
seed lone-surrogate-method '{"jsonrpc":"2.0","method":"\\ud800","id":1}'
seed lone-surrogate-params '{"jsonrpc":"2.0","method":"sum","params":["\\udc00"],"id":1}'
seed invalid-utf8 '{"jsonrpc":"2.0","method":"s\xffm","id":1}'
seed overlong-utf8 '{"jsonrpc":"2.0","method":"\xc0\xaf","id":1}'
seed encoded-surrogate '{"jsonrpc":"2.0","method":"\xed\xa0\x80","id":1}'
seed truncated-utf8 '{"jsonrpc":"2.0","method":"\xe2\x82","id":1}'
seed bom '\xef\xbb\xbf{"jsonrpc":"2.0","method":"sum","id":1}'
seed empty ''
seed whitespace ' \t\r\n '
seed trailing '{"jsonrpc":"2.0","method":"sum","id":1} x'
seed version-number '{"jsonrpc":2.0,"method":"sum","id":1}'
seed version-missing '{"method":"sum","id":1}'
seed method-missing '{"jsonrpc":"2.0","id":1}'
seed response-ok '{"jsonrpc":"2.0","result":19,"id":1}'
seed response-null '{"jsonrpc":"2.0","result":null,"id":"x"}'
seed response-error '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":1}'
seed response-bad-error '{"jsonrpc":"2.0","error":{"code":1.5,"message":"x"},"id":1}'
seed response-both '{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1}'
seed response-no-id '{"jsonrpc":"2.0","result":1}'
seed response-batch '[{"jsonrpc":"2.0","result":1,"id":1},{"jsonrpc":"2.0","method":"update"}]'
seed discover '{"jsonrpc":"2.0","method":"rpc.discover","id":1}'
seed eth '{"jsonrpc":"2.0","method":"eth_getBalance","params":["0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045","latest"],"id":1}'
seed sum-floats '{"jsonrpc":"2.0","method":"sum","params":[1.5,1e308,1e308,-0],"id":1}'
seed sum-overflow '{"jsonrpc":"2.0","method":"sum","params":[9223372036854775807,1],"id":1}'
seed subtract-huge '{"jsonrpc":"2.0","method":"subtract","params":[1e400,1],"id":1}'
seed ndjson '{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}\n\n  \r\n{"jsonrpc":"2.0","method":"update"}\r\n[1]\nnot json\n'

# --- Generated: batches, nesting, long tokens ---
deep() { # deep N OPEN CLOSE
  local o c i; o=""; c=""
  for ((i = 0; i < $1; i++)); do o+="$2"; c+="$3"; done
  printf '%s%s' "$o" "$c"
}
for n in 127 128 129; do
  deep "$n" '[' ']' > "$seeds/deep-array-$n"
  printf '{"jsonrpc":"2.0","method":"sum","params":%s,"id":1}' "$(deep $((n - 1)) '[' ']')" > "$seeds/deep-params-$n"
done
for n in 128 129; do
  { deep "$n" '{"a":' '}' | sed "s/^\(\({\"a\":\)*\)/\11/"; } > "$seeds/deep-object-$n"
done
{ printf '['; for ((i = 0; i < 8; i++)); do
    printf '{"jsonrpc":"2.0","method":"sum","params":[%d,%d],"id":%d},' "$i" "$((i * 7))" "$i"
    printf '{"jsonrpc":"2.0","method":"notify_sum","params":[%d]},' "$i"
  done; printf '{"jsonrpc":"2.0","method":"get_data","id":"last"}]'; } > "$seeds/batch-mixed"
{ printf '['; for ((i = 0; i < 1000; i++)); do printf '1,'; done; printf '1]'; } > "$seeds/batch-1001"
{ printf '['; for ((i = 0; i < 999; i++)); do printf '{},'; done; printf '{}]'; } > "$seeds/batch-1000"
{ printf '{"jsonrpc":"2.0","method":"sum","params":[1'; head -c 10000 /dev/zero | tr '\0' '7'; printf '],"id":1}'; } > "$seeds/number-10000-digits"
{ printf '{"jsonrpc":"2.0","method":"sum","params":["'; for ((i = 0; i < 2000; i++)); do printf '\\n\\u00e9'; done; printf '"],"id":1}'; } > "$seeds/escapes-4000"

[ "${1:-}" = "--seeds-only" ] && exit 0

# --- The full corpora: seeds + JSONTestSuite, one folder per target ---
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^switchboard[-_]fuzz$')
for t in $targets; do
  mkdir -p "corpus/$t"
  cp "$seeds"/* "corpus/$t/"
  if [ -d "$suite" ]; then
    for f in "$suite"/*.json; do cp "$f" "corpus/$t/jts-$(basename "$f")"; done
  else
    echo "make-corpus.sh: JSONTestSuite not found at $suite; seeds only" >&2
  fi
done
echo "corpora written to $here/corpus/ ($(ls corpus | wc -l) targets)"
