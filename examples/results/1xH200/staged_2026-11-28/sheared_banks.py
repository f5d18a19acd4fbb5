# Wavefronts of the sheared transpose's shared accesses (sheared.patch): element (y, c) at byte
# y * pitch + c * es, pitch = ta * es + max(4, es). A wavefront serves at most one 4-byte word per
# bank (words repeated across lanes count once). Store side: a warp access covers row y's elements
# c = 32 k + lane - sh (those in [0, ta)); load side: column x's rows b = 32 k + lane - t.
def wavefronts(addrs, es):
    banks = {}
    for a in addrs:
        for w in range(a // 4, (a + es + 3) // 4):
            banks.setdefault(w % 32, set()).add(w)
    return max(len(s) for s in banks.values()) if banks else 0
for es, ta, tb in [(1, 128, 128), (2, 64, 128), (4, 32, 128), (8, 32, 128)]:
    unit = max(4, es); pitch = ta * es + unit
    worst_store = worst_load = 0
    best = lambda n: -(-n * es // 128)  # the bound: bytes / 128
    for sh in range(32):
        for y in range(tb):
            for k in range(ta // 32 + 1):
                cs = [32 * k + l - sh for l in range(32) if 0 <= 32 * k + l - sh < ta]
                if cs: worst_store = max(worst_store, wavefronts([y * pitch + c * es for c in cs], es) - best(len(cs)))
        for x in range(ta):
            for k in range(tb // 32 + 1):
                bs = [32 * k + l - sh for l in range(32) if 0 <= 32 * k + l - sh < tb]
                if bs: worst_load = max(worst_load, wavefronts([b * pitch + x * es for b in bs], es) - best(len(bs)))
    print(f"es {es}: tile {tb}x{ta}, pitch {pitch}: wavefronts above the bound, worst store {worst_store}, worst load {worst_load}")
