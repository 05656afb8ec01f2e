// Go's sourcegraph/jsonrpc2 (Debian golang-github-sourcegraph-jsonrpc2-dev 0.1.0)
// serving switchboard's demo methods in process, with the same command line,
// checks and timing loop as the C++ harnesses (../harness.hpp):
//
//	go-harness STACK check DIR W...
//	go-harness STACK time DIR BLOCKS W...
//	go-harness STACK count DIR W N
//
// Two stacks:
//
//   - conn: the library as a server runs, a *jsonrpc2.Conn with the documented
//     jsonrpc2.HandlerWithError handler. Its API is connection based: the Conn
//     reads objects from an ObjectStream in its own goroutine and writes the
//     responses back to it. The stream here is an in-memory ObjectStream (the
//     interface is the library's extension point): ReadObject unmarshals the
//     request bytes handed over a channel (what its PlainObjectCodec does, minus
//     the byte-stream framing), WriteObject marshals the response into bytes
//     handed back over another channel. One message = request bytes in, response
//     bytes out, including the hop to and from the Conn's reading goroutine that
//     the library imposes. (net.Pipe or io.Pipe would add a byte copy, a
//     json.Decoder and more goroutine switches on top of this.)
//   - codec: a lower bound for the library, not a way a server of it runs:
//     json.Unmarshal into its Request, the same method function, json.Marshal of
//     its Response. No Conn, no goroutine hop, no message-type sniffing. No
//     cheaper in-process entry exists: the Conn's read loop is private and the
//     Handler is only ever called by it.
//
// Neither takes a batch: version 0.1.0 has no batch support (an array fails to
// decode into its Request, and the Conn then closes with a protocol error), so
// checking a batch shows that error and run.sh reports the batch as n/a. Nor does
// either answer a parse error or an invalid request: the Conn closes on a message
// it cannot decode (`method` must be a string), and its Request cannot hold one.
//
// A notification has no response to wait for: the conn stack's handler signals
// when it has run one, and the harness waits for that instead (the Conn's
// goroutine hop is then still in the measure).
//
// Checks: the response must parse to the same JSON as switchboard's (numbers
// compared as their literal text, so 19 and 19.0 differ) and be byte-identical on
// a second call; every timed call is compared with it byte for byte.
//
// The harness runs with GOMAXPROCS=1 (unless GOMAXPROCS is set), so that the
// Conn's goroutine hop is a user-space switch on the timing thread, as single
// threaded as the other harnesses. (With GOMAXPROCS=2 on the 2-core machine the
// fastest blocks are the same and the median ones up to twice as slow: the hop
// then wakes the other thread.)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

const balance = "0x1bdb569fa3c2565cc"

// invalidParams is the demo's -32602 with its `data` object.
func invalidParams(data string) *jsonrpc2.Error {
	raw := json.RawMessage(data)
	return &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "Invalid params", Data: &raw}
}

// num is a number as the demo treats it: an exact integer when its literal is one
// that fits int64, else a float64.
type num struct {
	isInt bool
	i     int64
	f     float64
}

func numOf(n json.Number) (num, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return num{isInt: true, i: i}, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return num{}, false
	}
	return num{f: f}, true
}

func (n num) float() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

const subtractShape = `{"field":"params","reason":"expected [minuend, subtrahend] or {\"minuend\": number, \"subtrahend\": number}, finite numbers"}`
const sumShape = `{"field":"params","reason":"expected an array of finite numbers"}`
const toolsShape = `{"field":"params","reason":"expected {\"name\": string, \"arguments\": object}"}`
const balanceShape = `{"field":"params","reason":"expected [address, block]: a 20-byte 0x-hex address and a block tag or 0x-hex number"}`

func result(n num) (interface{}, error) {
	if n.isInt {
		return n.i, nil
	}
	if n.f-n.f != 0 {
		return nil, invalidParams(`{"field":"params","reason":"the result is not a finite number"}`)
	}
	return n.f, nil
}

// decode reads params strictly: numbers kept as their text.
func decode(params []byte, v interface{}) error {
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	return d.Decode(v)
}

func subtract(params []byte) (interface{}, error) {
	var a, b json.Number
	p := bytes.TrimLeft(params, " \t\r\n")
	switch {
	case len(p) > 0 && p[0] == '[':
		var v []json.Number
		if decode(p, &v) != nil || len(v) != 2 {
			return nil, invalidParams(subtractShape)
		}
		a, b = v[0], v[1]
	case len(p) > 0 && p[0] == '{':
		var v map[string]json.Number
		if decode(p, &v) != nil || len(v) != 2 {
			return nil, invalidParams(subtractShape)
		}
		var ok1, ok2 bool
		a, ok1 = v["minuend"]
		b, ok2 = v["subtrahend"]
		if !ok1 || !ok2 {
			return nil, invalidParams(subtractShape)
		}
	default:
		return nil, invalidParams(subtractShape)
	}
	x, ok1 := numOf(a)
	y, ok2 := numOf(b)
	if !ok1 || !ok2 {
		return nil, invalidParams(subtractShape)
	}
	if x.isInt && y.isInt {
		r := x.i - y.i
		if (r < x.i) == (y.i > 0) { // no overflow
			return result(num{isInt: true, i: r})
		}
	}
	return result(num{f: x.float() - y.float()})
}

func sum(params []byte) (interface{}, error) {
	var v []json.Number
	if decode(params, &v) != nil {
		return nil, invalidParams(sumShape)
	}
	acc := num{isInt: true}
	for _, s := range v {
		n, ok := numOf(s)
		if !ok {
			return nil, invalidParams(sumShape)
		}
		if acc.isInt && n.isInt {
			r := acc.i + n.i
			if (r > acc.i) == (n.i > 0) {
				acc.i = r
				continue
			}
		}
		acc = num{f: acc.float() + n.float()}
	}
	return result(acc)
}

// isHex: branch-free per byte, as the demo's.
func isHex(s string) bool {
	ok := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok = ok && (c-'0' < 10 || (c|0x20)-'a' < 6)
	}
	return ok
}

func ethGetBalance(params []byte) (interface{}, error) {
	var v []string
	if json.Unmarshal(params, &v) != nil || len(v) != 2 {
		return nil, invalidParams(balanceShape)
	}
	a, b := v[0], v[1]
	address := len(a) == 42 && strings.HasPrefix(a, "0x") && isHex(a[2:])
	block := false
	switch b {
	case "latest", "earliest", "pending", "safe", "finalized":
		block = true
	default:
		block = len(b) > 2 && strings.HasPrefix(b, "0x") && isHex(b[2:])
	}
	if !address || !block {
		return nil, invalidParams(balanceShape)
	}
	return balance, nil
}

// toolResult is tools/call's result (MCP's CallToolResult shape), as
// benches/src/dispatch.rs's ToolResult.
type toolResult struct {
	Content    [1]textContent `json:"content"`
	Structured struct {
		Arguments int `json:"arguments"`
	} `json:"structuredContent"`
	IsError bool `json:"isError"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// toolsCall: the tool's name as text content and how many arguments it got.
func toolsCall(params []byte) (interface{}, error) {
	var v struct {
		Name      *string                     `json:"name"`
		Arguments *map[string]json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &v) != nil || v.Name == nil || v.Arguments == nil || *v.Arguments == nil {
		return nil, invalidParams(toolsShape)
	}
	r := &toolResult{Content: [1]textContent{{Type: "text", Text: *v.Name}}}
	r.Structured.Arguments = len(*v.Arguments)
	return r, nil
}

var notified = map[string]int{}

// demo runs one method: the same semantics and answers as server/src/demo.rs.
func demo(method string, params *json.RawMessage) (interface{}, error) {
	var p []byte
	if params != nil && string(*params) != "null" {
		p = *params
	}
	switch method {
	case "subtract":
		return subtract(p)
	case "sum":
		return sum(p)
	case "get_data":
		return []interface{}{"hello", 5}, nil
	case "eth_getBalance":
		return ethGetBalance(p)
	case "tools/call":
		return toolsCall(p)
	case "update", "notify_hello", "notify_sum":
		notified[method]++
		return nil, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "Method not found"}
}

// ---- the two stacks ------------------------------------------------------------

type stack interface {
	// handle turns request bytes into response bytes (nil: no response).
	handle(req []byte) ([]byte, error)
}

// memStream is an in-memory ObjectStream: request bytes in over one channel,
// response bytes out over the other.
type memStream struct {
	in, out chan []byte
	closed  chan struct{}
}

func (s *memStream) ReadObject(v interface{}) error {
	select {
	case b := <-s.in:
		return json.Unmarshal(b, v)
	case <-s.closed:
		return io.EOF
	}
}

func (s *memStream) WriteObject(obj interface{}) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	s.out <- b
	return nil
}

func (s *memStream) Close() error {
	close(s.closed)
	return nil
}

type connStack struct {
	s    *memStream
	conn *jsonrpc2.Conn
	// ran receives one value per notification the handler has run.
	ran chan struct{}
}

func newConnStack() *connStack {
	s := &memStream{in: make(chan []byte), out: make(chan []byte), closed: make(chan struct{})}
	ran := make(chan struct{})
	h := jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (interface{}, error) {
		res, err := demo(r.Method, r.Params)
		if r.Notif {
			ran <- struct{}{}
		}
		return res, err
	})
	return &connStack{s: s, conn: jsonrpc2.NewConn(context.Background(), s, h), ran: ran}
}

func (c *connStack) handle(req []byte) ([]byte, error) {
	select {
	case c.s.in <- req:
	case <-c.conn.DisconnectNotify():
		return nil, errors.New("the connection is closed")
	}
	select {
	case b := <-c.s.out:
		return b, nil
	case <-c.ran:
		return nil, nil
	case <-c.conn.DisconnectNotify():
		return nil, errors.New("sourcegraph/jsonrpc2 closed the connection (its protocol error is logged above)")
	}
}

type codecStack struct{}

func (codecStack) handle(req []byte) ([]byte, error) {
	var r jsonrpc2.Request
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, fmt.Errorf("jsonrpc2.Request cannot decode it: %v", err)
	}
	res, err := demo(r.Method, r.Params)
	if r.Notif {
		return nil, nil
	}
	resp := jsonrpc2.Response{ID: r.ID}
	if err == nil {
		err = resp.SetResult(res)
	}
	if err != nil {
		resp.Error = err.(*jsonrpc2.Error)
	}
	return json.Marshal(resp)
}

// ---- the driver (as ../harness.hpp) ---------------------------------------------

type workload struct {
	name                   string
	request, expected, own []byte
}

// sameJSON: the same answer, as count check compares the Rust stacks' (dispatch.rs's
// same_answer): the same JSON, error objects by code and their message being a string.
func sameJSON(a, b []byte) bool {
	var x, y interface{}
	return decode(a, &x) == nil && decode(b, &y) == nil &&
		reflect.DeepEqual(errorsByCode(x), errorsByCode(y))
}

func errorsByCode(v interface{}) interface{} {
	one := func(r interface{}) {
		if m, ok := r.(map[string]interface{}); ok {
			if e, ok := m["error"].(map[string]interface{}); ok {
				_, isString := e["message"].(string)
				m["error"] = map[string]interface{}{"code": e["code"], "message_is_string": isString}
			}
		}
	}
	if a, ok := v.([]interface{}); ok {
		for _, r := range a {
			one(r)
		}
	} else {
		one(v)
	}
	return v
}

func check(s stack, w *workload, verbose bool) bool {
	out, err := s.handle(w.request)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", w.name, err)
		return false
	}
	w.own = append([]byte(nil), out...)
	var same bool
	if len(w.expected) == 0 || len(out) == 0 {
		same = len(w.expected) == 0 && len(bytes.TrimSpace(out)) == 0
	} else {
		same = sameJSON(out, w.expected)
	}
	if !same {
		fmt.Fprintf(os.Stderr, "%s: MISMATCH\n  request:     %s\n  switchboard: %s\n  this stack:  %s\n",
			w.name, w.request, w.expected, out)
		return false
	}
	again, err := s.handle(w.request)
	if err != nil || !bytes.Equal(again, w.own) {
		fmt.Fprintf(os.Stderr, "%s: a second call answered differently\n", w.name)
		return false
	}
	if verbose {
		shown := string(bytes.TrimSpace(w.own))
		if len(shown) > 100 {
			shown = shown[:97] + "..."
		}
		if shown == "" {
			shown = "(no response)"
		}
		fmt.Printf("  %-24s ok  %s\n", w.name, shown)
	}
	return true
}

func one(s stack, w *workload) {
	out, err := s.handle(w.request)
	if err != nil || !bytes.Equal(out, w.own) {
		fmt.Fprintf(os.Stderr, "%s: a timed call answered differently\n", w.name)
		os.Exit(1)
	}
}

func blockNs(s stack, w *workload, k int) float64 {
	t := time.Now()
	for i := 0; i < k; i++ {
		one(s, w)
	}
	return float64(time.Since(t).Nanoseconds()) / float64(k)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go-harness conn|codec check DIR W... | time DIR BLOCKS W... | count DIR W N")
	os.Exit(2)
}

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	args := os.Args[1:]
	if len(args) < 4 {
		usage()
	}
	var s stack
	switch args[0] {
	case "conn":
		s = newConnStack()
	case "codec":
		s = codecStack{}
	default:
		usage()
	}
	mode, dir := args[1], args[2]
	names := args[3:]
	blocks, count := 0, 0
	switch mode {
	case "check":
	case "time":
		blocks, _ = strconv.Atoi(args[3])
		names = args[4:]
	case "count":
		if len(args) != 5 {
			usage()
		}
		count, _ = strconv.Atoi(args[4])
		names = args[3:4]
	default:
		usage()
	}
	var ws []*workload
	for _, n := range names {
		req, err1 := os.ReadFile(dir + "/" + n + ".req")
		exp, err2 := os.ReadFile(dir + "/" + n + ".resp")
		if err1 != nil || err2 != nil {
			fmt.Fprintf(os.Stderr, "cannot read %s/%s.req and .resp\n", dir, n)
			os.Exit(2)
		}
		ws = append(ws, &workload{name: n, request: req, expected: exp})
	}
	ok := true
	for _, w := range ws {
		ok = check(s, w, mode == "check") && ok
	}
	if !ok {
		fmt.Fprintln(os.Stderr, "refusing to time: the answers above are not switchboard's")
		os.Exit(1)
	}
	switch mode {
	case "count":
		for i := 0; i < count; i++ {
			one(s, ws[0])
		}
	case "time":
		for _, w := range ws {
			blockNs(s, w, 100) // warm-up
			t := blockNs(s, w, 100)
			k := int(2e6 / t)
			if k < 1 {
				k = 1
			} else if k > 200000 {
				k = 200000
			}
			v := make([]float64, 0, blocks)
			for b := 0; b < blocks; b++ {
				v = append(v, blockNs(s, w, k))
			}
			sort.Float64s(v)
			fmt.Printf("%s\t%.1f\t%.1f\n", w.name, v[0], v[len(v)/2])
		}
	}
}
