"""A numpy ``BitGenerator`` whose every 64-bit word comes from the operating system's CSPRNG.

``as_generator("secure")`` returns ``numpy.random.Generator(SecureBitGenerator())``: numpy's own
transformations (53-bit doubles, Lemire's bounded integers, binomial/multinomial samplers) are
applied to words read from ``os.urandom`` (getrandom(2) on Linux), so the client-side randomiser is
driven by a cryptographically secure stream, not by a PRNG with a secret seed.

Notes: docs/notes/python.md, "ldpopt._secure"."""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

__all__ = ["SecureBitGenerator"]

_NEXT64 = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
_NEXT32 = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.c_void_p)
_NEXTD = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_void_p)


class _Bitgen(ctypes.Structure):
    # numpy/random/bitgen.h: typedef struct bitgen { void *state; next_uint64; next_uint32;
    # next_double; next_raw } bitgen_t;
    _fields_ = [("state", ctypes.c_void_p), ("next_uint64", _NEXT64), ("next_uint32", _NEXT32),
                ("next_double", _NEXTD), ("next_raw", _NEXT64)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class SecureBitGenerator:
    """Bit generator reading every word from ``os.urandom``; wrap it in ``numpy.random.Generator``."""

    _BLOCK_WORDS = 4096

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._words: list[int] = []
        # keep the callbacks, the struct and the name alive as long as this object (the Generator
        # holds a reference to it)
        self._callbacks = (_NEXT64(self._next_uint64), _NEXT32(self._next_uint32),
                           _NEXTD(self._next_double), _NEXT64(self._next_uint64))
        self._struct = _Bitgen(None, *self._callbacks)
        self._name = b"BitGenerator"
        self.capsule = _PyCapsule_New(ctypes.addressof(self._struct), self._name, None)

    def _next_uint64(self, _state) -> int:
        if not self._words:
            self._words = list(memoryview(os.urandom(8 * self._BLOCK_WORDS)).cast("Q"))
        return self._words.pop()

    def _next_uint32(self, _state) -> int:
        return self._next_uint64(_state) >> 32

    def _next_double(self, _state) -> float:
        return (self._next_uint64(_state) >> 11) * (1.0 / 9007199254740992.0)  # 53 bits / 2^53

    def random_raw(self, size=None, output: bool = True):
        """Raw 64-bit words straight from ``os.urandom`` (numpy's BitGenerator.random_raw API)."""
        k = 1 if size is None else int(np.prod(size))
        words = np.frombuffer(os.urandom(8 * k), dtype=np.uint64).copy()
        if not output:
            return None
        return words[0] if size is None else words.reshape(size)

    def __repr__(self) -> str:
        return "SecureBitGenerator(os.urandom)"
