"""Wavefronts of the staged transpose's gathers, simulated on 32 banks of 4 bytes (2026-11-28).

The default tile (64 columns by 8 destination words, 8 warps; lane = word + 8 x column), random
destination pitches and shifts: for each element e of each register, the number of distinct 4-byte
words in the most loaded bank. `sim` compares raw (v2: each row at its own shift, words XOR-swizzled
by slot / V) with realigned slots with a 16-byte pad every V slots; `sim2` tries realigned slots
XOR-swizzled, or with a pad of ROWPAD bytes a slot and GROUPPAD every V slots. Not the project's bank
model and not ncu: a check of the layout choice (staged_transpose.cpp) before a GPU measures it.
Run: python3 bank_sim.py
"""
import random
def waves(addrs):
    banks = {}
    for a in addrs:
        banks.setdefault((a >> 2) & 31, set()).add(a >> 2)
    return max(len(s) for s in banks.values())
def sim(es, realigned, trials=300, a=64, words=8):
    V = 16 // es; logv = V.bit_length() - 1
    rows = words * V + V - 1
    w1 = a * es // 16 if realigned else a * es // 16 + 1
    sw = 1
    while sw < w1: sw *= 2
    ROW = sw * 16
    tot = 0; n = 0
    for _ in range(trials):
        D0 = random.randrange(16); dab = random.randrange(1, 4096) * es
        S0 = random.randrange(16); sbb = random.randrange(1, 4096) * es
        b0w = -(V - 1) + V * words * random.randrange(4)
        hs = (S0 + b0w * sbb) & 15; hb = sbb & 15
        for r in range(2):
            for e in range(V):
                addrs = []
                for lane in range(32):
                    x = lane & 7; y = (lane >> 3) + 32 * r
                    ds = (D0 + y * dab) & 15
                    i0 = x * V + V - 1 - ds // es
                    i = i0 + e
                    if realigned:
                        addr = i * ROW + (i >> logv) * 16 + y * es
                    else:
                        col = ((hs + i * hb) & 15) + y * es
                        addr = (i * ROW + col) ^ (((i >> logv) & (sw - 1)) << 4)
                    addrs.append(addr)
                tot += waves(addrs); n += 1
    return tot / n
random.seed(1)
for es in (1, 2, 4, 8):
    print(es, "raw %.2f" % sim(es, False), "realigned %.2f" % sim(es, True))

def sim2(es, mode, trials=300, a=64, words=8, rowpad=4, grouppad=16):
    V = 16 // es; logv = V.bit_length() - 1
    w1 = a * es // 16
    ROW = w1 * 16
    tot = 0; n = 0
    for _ in range(trials):
        D0 = random.randrange(16); dab = random.randrange(1, 4096) * es
        for r in range(2):
            for e in range(V):
                addrs = []
                for lane in range(32):
                    x = lane & 7; y = (lane >> 3) + 32 * r
                    ds = (D0 + y * dab) & 15
                    i = x * V + V - 1 - ds // es + e
                    if mode == 'xor':
                        addr = (i * ROW + y * es) ^ (((i >> logv) & (w1 - 1)) << 4)
                    else:
                        addr = i * (ROW + rowpad) + (i >> logv) * grouppad + y * es
                    addrs.append(addr)
                tot += waves(addrs); n += 1
    return tot / n
random.seed(2)
for es in (1, 2, 4, 8):
    res = ["xor %.2f" % sim2(es, 'xor')]
    for rp, gp in ((0, 16), (4, 16), (4, 0), (8, 16), (4, 32), (12, 16)):
        res.append("pad%d/%d %.2f" % (rp, gp, sim2(es, 'pad', rowpad=rp, grouppad=gp)))
    print(es, *res)
