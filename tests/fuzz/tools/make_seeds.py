#!/usr/bin/env python3
"""Writes the parameter-file seed (tests/fuzz/corpus/params/) and the hostile-size regression files
(tests/fixtures/fuzz/<target>/) that need computing: a header checksum, or edits of the
committed circom fixtures. Run from the repository root; the outputs are committed."""
import os
import struct

G1_BYTES, G2_BYTES, HEADER_BYTES = 104, 200, 144  # sizeof(g1_affine_t), sizeof(g2_affine_t), header
M64 = (1 << 64) - 1


def checksum(data: bytes) -> int:
    """params_checksum (prover/groth16/params_file.cpp)."""
    h = 0x243F6A8885A308D3 ^ len(data)
    i = 0
    while i + 8 <= len(data):
        w = struct.unpack_from("<Q", data, i)[0]
        x = h ^ w
        h = (((x << 29) | (x >> 35)) & M64) * 0x9E3779B97F4A7C15 & M64
        i += 8
    for b in data[i:]:
        h = (h ^ b) * 0x100000001B3 & M64
    return h ^ (h >> 31)


def params(domain=1, n_h=0, n_l=0, payload=None):
    """A parameter file for the empty circuit (0 inputs, 0 aux): the six key points, all zero."""
    if payload is None:
        payload = bytes(3 * G1_BYTES + 3 * G2_BYTES)
    head = b"CUZKPARM" + struct.pack("<II", 1, 0)
    head += struct.pack("<5Q", 0, 0, 0, domain, 7)  # inputs, aux, constraints, domain, seed
    head += struct.pack("<6Q", 0, 0, 0, 0, n_h, n_l)  # ic, a, b_g1, b_g2, h, l
    head += struct.pack("<II", G1_BYTES, G2_BYTES)
    head += struct.pack("<QQ", len(payload), checksum(payload))
    head += struct.pack("<Q", checksum(head))
    head += struct.pack("<Q", 0)
    assert len(head) == HEADER_BYTES
    return head + payload


def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


put("tests/fuzz/corpus/params/empty-circuit.params", params())
# n_h raised by 2^61: 2^61 * 104 wraps to 0 in 64 bits, so the payload size still "agrees".
put("tests/fixtures/fuzz/params/nh-plus-2pow61.params", params(n_h=1 << 61))
put("tests/fixtures/fuzz/params/nl-plus-2pow61.params", params(n_l=1 << 61))
# a domain above 2^63: compute_h's shift loop never ended
put("tests/fixtures/fuzz/params/domain-above-2pow63.params", params(domain=(1 << 63) + 1))

r1cs = bytearray(open("tests/fixtures/circom/small.r1cs", "rb").read())


def section(b, want):
    pos = 12
    for _ in range(struct.unpack_from("<I", b, 8)[0]):
        t, size = struct.unpack_from("<IQ", b, pos)
        if t == want:
            return pos + 12
        pos += 12 + size
    raise SystemExit("section %d not found" % want)


h = section(r1cs, 1)
for name, off, value in [("constraints-40M", 60, 40_000_000), ("wires-2pow32-1", 36, 0xFFFFFFFF),
                         ("npubout-0xffffffff", 40, 0xFFFFFFFF)]:
    b = bytearray(r1cs)
    struct.pack_into("<I", b, h + off, value)
    put("tests/fixtures/fuzz/r1cs/%s.r1cs" % name, bytes(b))

wtns = bytearray(open("tests/fixtures/circom/small.wtns", "rb").read())
struct.pack_into("<I", wtns, section(wtns, 1) + 36, 0xFFFFFFFF)
put("tests/fixtures/fuzz/wtns/values-2pow32-1.wtns", bytes(wtns))

# a 1 TB section in a small file
zkey = bytearray(open("tests/fixtures/snarkjs/small.zkey", "rb").read())
struct.pack_into("<Q", zkey, 12 + 4, 1 << 40)
put("tests/fixtures/fuzz/zkey/section-1TB.zkey", bytes(zkey))

# results: parameters holding a deeply nested array (10,000 levels keeps the file small; the
# limit is 64, and tests/test_results.cpp checks 100,000)
res = open("tests/fuzz/corpus/results/e2e-nospans.jsonl").read().split("\n")
sample = res[1].replace('"parameters":{', '"parameters":{"deep":' + "[" * 10000 + "]" * 10000 + ",", 1)
assert sample != res[1]
put("tests/fixtures/fuzz/results/parameters-10000-deep.jsonl", (res[0] + "\n" + sample + "\n").encode())
