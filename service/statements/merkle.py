"""An RFC 6962 (Certificate Transparency) Merkle tree of SHA-256: a leaf's hash is SHA-256(0x00 || leaf), a
node's SHA-256(0x01 || left || right), and a tree of n > 1 leaves splits at the largest power of two below
n. The root commits to every leaf and its order; an inclusion proof (audit path) of one leaf is the
log2(n) hashes that lead from it to the root."""

import hashlib
from collections.abc import Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two below `size` (size > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def _root_of(hashes: Sequence[bytes]) -> bytes:
    if len(hashes) == 1:
        return hashes[0]
    k = _split(len(hashes))
    return _node(_root_of(hashes[:k]), _root_of(hashes[k:]))


def root(leaves: Sequence[bytes]) -> bytes:
    """The tree's root hash (of no leaf: SHA-256 of nothing)."""
    return _root_of([leaf_hash(leaf) for leaf in leaves]) if leaves else EMPTY_ROOT


def _path(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    if len(hashes) == 1:
        return []
    k = _split(len(hashes))
    if index < k:
        return [*_path(index, hashes[:k]), _root_of(hashes[k:])]
    return [*_path(index - k, hashes[k:]), _root_of(hashes[:k])]


def audit_path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The inclusion proof of leaf `index` (RFC 6962 §2.1.1), from the leaf's sibling up."""
    if not 0 <= index < len(leaves):
        raise IndexError(f"leaf {index} of a tree of {len(leaves)}")
    return _path(index, [leaf_hash(leaf) for leaf in leaves])


def root_from_path(leaf: bytes, index: int, size: int, path: Sequence[bytes]) -> bytes | None:
    """The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or None when the path cannot be one of a
    tree of `size` leaves (too short, too long, an index out of the tree)."""
    if not 0 <= index < size:
        return None
    node, last = index, size - 1
    current = leaf_hash(leaf)
    for sibling in path:
        if last == 0:
            return None  # more hashes than the tree has levels
        if node % 2 == 1 or node == last:
            current = _node(sibling, current)
            if node % 2 == 0:
                while node % 2 == 0 and node != 0:
                    node, last = node >> 1, last >> 1
        else:
            current = _node(current, sibling)
        node, last = node >> 1, last >> 1
    return current if last == 0 else None
