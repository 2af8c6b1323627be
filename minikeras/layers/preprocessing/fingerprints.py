"""The string hashes Keras's `Hashing` uses (through TensorFlow), in plain Python.

- `fingerprint64`: FarmHash's `Fingerprint64` (the "na" variant of
  `Hash64`), which `tf.strings.to_hash_bucket_fast` uses;
- `siphash24`: SipHash-2-4 keyed by two 64-bit ints, which
  `tf.strings.to_hash_bucket_strong` uses when `Hashing` is given a `salt`.

Both take bytes and return an int in `[0, 2**64)`. All arithmetic is modulo
2**64, written out with `& MASK`. The tests check them against TensorFlow's
frozen fingerprints, Keras's documented `Hashing` bins and SipHash's
published vectors; those cover strings of up to 16 bytes for FarmHash (the
longer-string branches follow FarmHash's source but have no reference value
in the tests).
"""

__all__ = ["fingerprint64", "siphash24"]

MASK = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F


def _fetch64(data, at):
    return int.from_bytes(data[at : at + 8], "little")


def _fetch32(data, at):
    return int.from_bytes(data[at : at + 4], "little")


def _rotate(value, shift):
    """Rotates a 64-bit value right by `shift`."""
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash16(u, v, mul):
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _hash_0_to_16(data, n):
    if n >= 8:
        mul = K2 + n * 2
        a = (_fetch64(data, 0) + K2) & MASK
        b = _fetch64(data, n - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        return _hash16((n + (_fetch32(data, 0) << 3)) & MASK, _fetch32(data, n - 4), mul)
    if n > 0:
        y = data[0] + (data[n >> 1] << 8)
        z = n + (data[n - 1] << 2)
        return (_shift_mix(((y * K2) ^ (z * K0)) & MASK) * K2) & MASK
    return K2


def _hash_17_to_32(data, n):
    mul = K2 + n * 2
    a = (_fetch64(data, 0) * K1) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & MASK
    d = (_fetch64(data, n - 16) * K2) & MASK
    return _hash16(
        (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
        (a + _rotate((b + K2) & MASK, 18) + c) & MASK,
        mul,
    )


def _hash_33_to_64(data, n):
    mul = K2 + n * 2
    a = (_fetch64(data, 0) * K2) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, n - 8) * mul) & MASK
    d = (_fetch64(data, n - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(data, 16) * mul) & MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, n - 32)) * mul) & MASK
    h = ((z + _fetch64(data, n - 24)) * mul) & MASK
    return _hash16(
        (_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
        (e + _rotate((f + a) & MASK, 18) + g) & MASK,
        mul,
    )


def _weak_hash_32(data, at, a, b):
    w, x = _fetch64(data, at), _fetch64(data, at + 8)
    y, z = _fetch64(data, at + 16), _fetch64(data, at + 24)
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def fingerprint64(data):
    """FarmHash `Fingerprint64` of `data`, as TensorFlow computes it.

    Args:
        data: bytes.

    Returns:
        An int in `[0, 2**64)`.

    Example:
        >>> from minikeras.layers.preprocessing.fingerprints import fingerprint64
        >>> [fingerprint64(s) % 3 for s in (b"A", b"B", b"C", b"D", b"E")]  # Keras's example
        [1, 0, 1, 1, 2]
    """
    n = len(data)
    if n <= 16:
        return _hash_0_to_16(data, n)
    if n <= 32:
        return _hash_17_to_32(data, n)
    if n <= 64:
        return _hash_33_to_64(data, n)
    x, y = 81, (81 * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v, w = (0, 0), (0, 0)
    x = (x * K2 + _fetch64(data, 0)) & MASK
    end = ((n - 1) // 64) * 64
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * K1) & MASK
        y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * K1) & MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, at + 40)) & MASK
        z = (_rotate((z + w[0]) & MASK, 33) * K1) & MASK
        v = _weak_hash_32(data, at, (v[1] * K1) & MASK, (x + w[0]) & MASK)
        w = _weak_hash_32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    at = n - 64  # the last 64 bytes
    w = ((w[0] + ((n - 1) & 63)) & MASK, w[1])
    v = ((v[0] + w[0]) & MASK, v[1])
    w = ((w[0] + v[0]) & MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * mul) & MASK
    x ^= (w[1] * 9) & MASK
    y = (y + v[0] * 9 + _fetch64(data, at + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * mul) & MASK
    v = _weak_hash_32(data, at, (v[1] * mul) & MASK, (x + w[0]) & MASK)
    w = _weak_hash_32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
    z, x = x, z
    return _hash16(
        (_hash16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK,
        (_hash16(v[1], w[1], mul) + x) & MASK,
        mul,
    )


def _rotl(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & MASK


def siphash24(data, key0, key1):
    """SipHash-2-4 of `data` keyed by two 64-bit ints, as TensorFlow's strong hash buckets.

    Args:
        data: bytes.
        key0: the key's first 64-bit int.
        key1: the key's second 64-bit int.

    Returns:
        An int in `[0, 2**64)`.

    Example:
        >>> from minikeras.layers.preprocessing.fingerprints import siphash24
        >>> [siphash24(s, 133, 137) % 3 for s in (b"A", b"B", b"C", b"D", b"E")]  # Keras's
        [1, 2, 1, 0, 2]
    """
    key0, key1 = key0 & MASK, key1 & MASK
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573

    def rounds(count, v0, v1, v2, v3):
        for _ in range(count):
            v0 = (v0 + v1) & MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    n = len(data)
    tail = n - n % 8
    words = [_fetch64(data, at) for at in range(0, tail, 8)]
    words.append(int.from_bytes(data[tail:], "little") | ((n & 0xFF) << 56))
    for word in words:
        v3 ^= word
        v0, v1, v2, v3 = rounds(2, v0, v1, v2, v3)
        v0 ^= word
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(4, v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
