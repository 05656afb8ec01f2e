#!/usr/bin/env python3
"""switchboard from Python through ctypes: load libswitchboard.so, register a method
written in Python, handle messages.

Usage: python_ctypes.py [PATH/TO/libswitchboard.so] [MESSAGE ...]
Without a path it uses $SWITCHBOARD_LIB, then the system's libswitchboard (installed
by ffi/install.sh; set LD_LIBRARY_PATH=PREFIX/lib for a private prefix). Each MESSAGE
is handled and its response printed (a line "(no response)" for notifications); without
messages, a few built-in examples are handled.
"""

import ctypes
import ctypes.util
import os
import sys


class Slice(ctypes.Structure):
    """swb_slice: a borrowed view, valid only while the callback runs."""

    _fields_ = [("ptr", ctypes.POINTER(ctypes.c_uint8)), ("len", ctypes.c_size_t)]

    def bytes(self):
        return ctypes.string_at(self.ptr, self.len) if self.len else b""


class Call(ctypes.Structure):
    _fields_ = [
        ("method", Slice),
        ("id", Slice),
        ("params", Slice),
        ("is_notification", ctypes.c_bool),
    ]


METHOD_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Call), ctypes.c_void_p)
SWB_RESULT_OK = 0


def load(path=None):
    path = path or os.environ.get("SWITCHBOARD_LIB") or ctypes.util.find_library("switchboard")
    if not path:
        sys.exit("libswitchboard not found: pass its path or set SWITCHBOARD_LIB")
    lib = ctypes.CDLL(path)
    lib.swb_version.restype = ctypes.c_char_p
    lib.swb_result_str.restype = ctypes.c_char_p
    lib.swb_result_str.argtypes = [ctypes.c_uint32]
    lib.swb_router_builder_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.swb_router_builder_method.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, METHOD_FN, ctypes.c_void_p, ctypes.c_void_p,
    ]
    lib.swb_router_builder_build.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.swb_router_free.argtypes = [ctypes.c_void_p]
    lib.swb_router_free.restype = None
    lib.swb_session_new.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.swb_session_free.argtypes = [ctypes.c_void_p]
    lib.swb_session_free.restype = None
    lib.swb_session_handle.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
        ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)), ctypes.POINTER(ctypes.c_size_t),
    ]
    lib.swb_writer_string.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.swb_writer_raw_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.swb_writer_error.argtypes = [
        ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
    ]
    for name in ("swb_router_builder_new", "swb_router_builder_method", "swb_router_builder_build",
                 "swb_session_new", "swb_session_handle", "swb_writer_string", "swb_writer_raw_json",
                 "swb_writer_error"):
        getattr(lib, name).restype = ctypes.c_uint32
    return lib


def check(lib, rc, what):
    if rc != SWB_RESULT_OK:
        raise RuntimeError(f"{what}: {lib.swb_result_str(rc).decode()}")


class Server:
    """A router with Python methods and one session (use one per thread)."""

    def __init__(self, lib, methods):
        self.lib = lib
        self._callbacks = []  # keep the ctypes callbacks alive as long as the router
        builder = ctypes.c_void_p()
        check(lib, lib.swb_router_builder_new(ctypes.byref(builder)), "builder")
        for name, fn in methods.items():
            cb = METHOD_FN(self._adapt(fn))
            self._callbacks.append(cb)
            raw = name.encode()
            check(lib, lib.swb_router_builder_method(builder, raw, len(raw), cb, None, None), name)
        self.router = ctypes.c_void_p()
        check(lib, lib.swb_router_builder_build(builder, ctypes.byref(self.router)), "build")
        self.session = ctypes.c_void_p()
        check(lib, lib.swb_session_new(self.router, ctypes.byref(self.session)), "session")

    def _adapt(self, fn):
        lib = self.lib

        def callback(_user_data, call_ptr, writer):
            call = call_ptr.contents
            try:
                result = fn(call.method.bytes().decode(), call.params.bytes(), call.id.bytes())
            except Exception as e:  # an application error: code 1, the text as message
                msg = str(e).encode()
                lib.swb_writer_error(writer, 1, msg, len(msg), None, 0)
                return 1
            if isinstance(result, str):
                raw = result.encode()
                return lib.swb_writer_string(writer, raw, len(raw))
            return lib.swb_writer_raw_json(writer, result, len(result))  # bytes: raw JSON

        return callback

    def handle(self, message: bytes):
        out = ctypes.POINTER(ctypes.c_uint8)()
        n = ctypes.c_size_t()
        check(self.lib, self.lib.swb_session_handle(self.session, message, len(message),
                                                    ctypes.byref(out), ctypes.byref(n)), "handle")
        return ctypes.string_at(out, n.value) if n.value else None  # copy: valid until next call

    def close(self):
        self.lib.swb_session_free(self.session)
        self.lib.swb_router_free(self.router)


def main(argv):
    path = argv[1] if len(argv) > 1 and not argv[1].startswith("{") and not argv[1].startswith("[") else None
    messages = [m.encode() for m in argv[2 if path else 1:]]
    lib = load(path)
    print(f"switchboard {lib.swb_version().decode()}")

    def greet(method, params, id_):
        return f"hello from Python, id {id_.decode()}"

    def add(method, params, id_):
        import json

        a, b = json.loads(params)  # params are the exact, validated JSON bytes
        return json.dumps(a + b).encode()

    def fail(method, params, id_):
        raise ValueError("no such account")

    server = Server(lib, {"greet": greet, "add": add, "fail": fail})
    messages = messages or [
        b'{"jsonrpc":"2.0","method":"greet","id":7}',
        b'{"jsonrpc":"2.0","method":"add","params":[40,2],"id":"a"}',
        b'{"jsonrpc":"2.0","method":"fail","id":3}',
        b'[{"jsonrpc":"2.0","method":"add","params":[1,1],"id":1},{"jsonrpc":"2.0","method":"greet"}]',
        b'{"jsonrpc":"2.0","method":"greet"}',
        b'{"jsonrpc":"2.0","method":"nope","id":1}',
        b'{"jsonrpc":"2.0",',
    ]
    for m in messages:
        resp = server.handle(m)
        print(resp.decode() if resp is not None else "(no response)")
    server.close()


if __name__ == "__main__":
    main(sys.argv)
