"""zlib compression of the many small blobs the index stores (node rows, table rows).

``zlib.compress`` sets up a 32 KB window and a 64 KB hash table per call whatever the
input's size: for a blob of a few hundred bytes that set-up is ~4× the compression.  Here
the window is no larger than the input (so nothing it could match is out of reach) and
the hash table scales with it; the result is an ordinary zlib stream (``zlib.decompress``
reads it) and depends only on the input.
"""

from __future__ import annotations

import zlib


def deflate(raw: bytes, level: int = 1) -> bytes:
    """``raw`` zlib-compressed, with a window and hash table sized to it."""
    wbits = min(15, max(9, (len(raw) - 1).bit_length()))
    c = zlib.compressobj(level, zlib.DEFLATED, wbits, max(1, min(8, wbits - 6)))
    return c.compress(raw) + c.flush()


__all__ = ["deflate"]
