#!/usr/bin/env python3
"""Write an ITCH 5.0 day file as MoldUDP64 multicast packets in a pcap or pcapng capture.

Why: the capture front end (pcap/pcapng -> Ethernet/VLAN -> IPv4 -> UDP -> MoldUDP64 -> ITCH)
needs captures whose message stream is known exactly: the same day as the BinaryFILE, so a book
built from either must give the same CSV row for the same seq. The capture also carries what a
real one does and a receiver must cope with: duplicates, bounded reordering, a second line,
frames of other traffic, a heartbeat and an End of Session.

Packets: the day's records in file order are packed into MoldUDP64 packets of at most --max-payload
bytes of UDP payload (20-byte header: session a10, sequence u64 of the first block, count u16;
then count blocks of u16 length + one ITCH message). The sequence of a block is its record's
1-based position in the day file. After the last data packet come a heartbeat (count 0) and an
End of Session (count 0xFFFF), both carrying the next expected sequence.

Frames: Ethernet II (destination MAC 01:00:5e + the low 23 bits of the group), an optional 802.1Q
tag (--vlan), IPv4 (20-byte header, correct header checksum and total length, DF set), UDP with
checksum 0 (none). Frames below 60 bytes are zero padded.

Line B (--ab): a second copy of every packet, to the SAME group and port but from ANOTHER source
address (and source MAC), arriving 1-40 us after line A's copy. That is what a capture on one NIC
shows when both lines are switched onto it; a receiver tells the lines apart by source address.

Disorder: --dup-rate repeats a packet on its line right after it; --reorder-rate swaps a frame
with one 1 to 8 positions later (frames move, capture time stamps stay in order).
Noise that a filter must drop: an ARP request, a UDP datagram to the same group on another port,
one to another group, inserted at the start, the middle and the end.

Time stamps: capture time = session date midnight in US Eastern time (--date) + the ITCH
timestamp of the packet's first message + 20 us, in UTC; pcap is written in microseconds, or
nanoseconds with --ns (magic 0xA1B23C4D); pcapng always uses if_tsresol 9 (nanoseconds).
Everything is little-endian (the writing host's order). Deterministic by --seed.

Standard library only. Example:
    make_mold_pcap.py day.itch --out day.pcap --ab --vlan --dup-rate 0.05 --reorder-rate 0.05
"""
import argparse
import datetime as dt
import gzip
import random
import struct
import sys

MOLD = struct.Struct(">10sQH")
ETH_MIN = 60


def read_records(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        data = f.read()
    pos, end = 0, len(data)
    while pos + 2 <= end:
        n = (data[pos] << 8) | data[pos + 1]
        if pos + 2 + n > end:
            raise ValueError(f"{path}: truncated record at byte {pos}")
        yield data[pos + 2: pos + 2 + n]
        pos += 2 + n


def mold_packets(records, session, max_payload):
    """Yield (first seq, ITCH timestamp of the first block, payload, block count)."""
    seq, first, blocks, size, ts0 = 1, 1, [], MOLD.size, 0
    for msg in records:
        if blocks and size + 2 + len(msg) > max_payload:
            yield first, ts0, MOLD.pack(session, first, len(blocks)) + b"".join(blocks), len(blocks)
            blocks, size = [], MOLD.size
        if not blocks:
            first, ts0 = seq, int.from_bytes(msg[5:11], "big")
        blocks.append(struct.pack(">H", len(msg)) + msg)
        size += 2 + len(msg)
        seq += 1
    if blocks:
        yield first, ts0, MOLD.pack(session, first, len(blocks)) + b"".join(blocks), len(blocks)


def ip_checksum(header):
    s = sum(struct.unpack(f">{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(text):
    return bytes(int(x) for x in text.split("."))


class Framer:
    def __init__(self, vlan):
        self.vlan = vlan
        self.ident = {}

    def eth(self, dst_mac, src_mac, ethertype, payload):
        tag = struct.pack(">HH", 0x8100, self.vlan & 0x0FFF) if self.vlan else b""
        frame = dst_mac + src_mac + tag + struct.pack(">H", ethertype) + payload
        return frame + b"\x00" * (ETH_MIN - len(frame)) if len(frame) < ETH_MIN else frame

    def udp(self, src, dst, sport, dport, payload, src_mac):
        ident = self.ident.get(src, 0)
        self.ident[src] = (ident + 1) & 0xFFFF
        udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
        hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident, 0x4000, 32, 17, 0, src, dst)
        hdr = hdr[:10] + struct.pack(">H", ip_checksum(hdr)) + hdr[12:]
        dst_mac = b"\x01\x00\x5e" + bytes([dst[1] & 0x7F, dst[2], dst[3]])
        return self.eth(dst_mac, src_mac, 0x0800, hdr + udp)

    def arp(self, sender_ip, target_ip, src_mac):
        body = struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, src_mac, sender_ip, b"\x00" * 6, target_ip)
        return self.eth(b"\xff" * 6, src_mac, 0x0806, body)


def write_pcap(f, frames, ns):
    f.write(struct.pack("<IHHiIII", 0xA1B23C4D if ns else 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for t, frame in frames:
        sec, frac = divmod(t, 1_000_000_000)
        f.write(struct.pack("<IIII", sec, frac if ns else frac // 1000, len(frame), len(frame)) + frame)


def block(btype, body):
    body += b"\x00" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def write_pcapng(f, frames):
    f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
    opts = struct.pack("<HHB3x", 9, 1, 9)  # if_tsresol = 10^-9
    name = b"mold0"
    opts += struct.pack("<HH", 2, len(name)) + name + b"\x00" * (-len(name) % 4)  # if_name
    opts += struct.pack("<HH", 0, 0)
    f.write(block(1, struct.pack("<HHI", 1, 0, 65535) + opts))
    for t, frame in frames:
        f.write(block(6, struct.pack("<IIIII", 0, t >> 32, t & 0xFFFFFFFF, len(frame), len(frame)) + frame))


def midnight_utc_ns(date):
    day = dt.date.fromisoformat(date)
    try:
        from zoneinfo import ZoneInfo
        local = dt.datetime(day.year, day.month, day.day, tzinfo=ZoneInfo("America/New_York"))
    except Exception:  # no time zone database: assume Eastern standard time
        local = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    return int(local.timestamp()) * 1_000_000_000


def build(a):
    rng = random.Random(a.seed)
    framer = Framer(a.vlan)
    session = a.session.encode("ascii")[:10].ljust(10)
    group, port = ip4(a.group), a.port
    lines = [(ip4(a.source_a), b"\x02\x00\x00\x00\x00\x0a")]
    if a.ab:
        lines.append((ip4(a.source_b), b"\x02\x00\x00\x00\x00\x0b"))
    midnight = midnight_utc_ns(a.date)
    events = []  # (capture time ns, order key, frame)
    n_data = blocks = next_seq = 0
    t = midnight
    for first, ts, payload, count in mold_packets(read_records(a.day), session, a.max_payload):
        t = max(t, midnight + ts + 20_000)
        n_data += 1
        blocks += count
        next_seq = first + count
        for li, (src, mac) in enumerate(lines):
            when = t + (rng.randrange(1_000, 40_000) if li else 0)
            frame = framer.udp(src, group, 40000 + li, port, payload, mac)
            events.append((when, len(events), frame))
            if rng.random() < a.dup_rate:
                events.append((when + rng.randrange(100, 5_000), len(events), frame))
    for count in (0, 0xFFFF):  # heartbeat, then End of Session, on every line
        t += 1_000_000
        for li, (src, mac) in enumerate(lines):
            frame = framer.udp(src, group, 40000 + li, port, MOLD.pack(session, next_seq, count), mac)
            events.append((t + li * 2_000, len(events), frame))
    events.sort()
    src_a, mac_a = lines[0]
    noise = [framer.arp(src_a, ip4("10.0.0.1"), mac_a),
             framer.udp(src_a, group, 40000, port + 1, b"not a mold packet on another port", mac_a),
             framer.udp(src_a, ip4("233.54.12.99"), 40000, port, MOLD.pack(b"OTHERSESS ", 1, 0), mac_a)]
    for i, frame in enumerate(noise):
        for where in (0, len(events) // 2, len(events) - 1):
            events.insert(where + i, (events[max(0, where + i - 1)][0], -1, frame))
    frames = [e[2] for e in events]
    times = [e[0] for e in events]
    for i in range(1, len(times)):
        times[i] = max(times[i], times[i - 1])
    swaps = 0
    for i in range(len(frames) - 2):  # keep the two end-of-day control packets last
        if rng.random() < a.reorder_rate:
            j = min(len(frames) - 3, i + rng.randint(1, 8))
            frames[i], frames[j] = frames[j], frames[i]
            swaps += 1
    return list(zip(times, frames)), {"data_packets": n_data, "blocks": blocks, "lines": len(lines),
                                      "frames": len(frames), "swaps": swaps, "next_seq": next_seq}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("day", help="ITCH 5.0 BinaryFILE, raw or .gz")
    ap.add_argument("--out", required=True, help="capture to write")
    ap.add_argument("--pcapng", action="store_true", help="pcapng (SHB, IDB, EPB) instead of classic pcap")
    ap.add_argument("--ns", action="store_true", help="classic pcap with nanosecond time stamps")
    ap.add_argument("--session", default="0000012345", help="MoldUDP64 session, 10 ASCII characters")
    ap.add_argument("--group", default="233.54.12.1", help="multicast destination group of both lines")
    ap.add_argument("--port", type=int, default=26400, help="UDP destination port of both lines")
    ap.add_argument("--source-a", default="10.20.30.1", help="line A source address")
    ap.add_argument("--source-b", default="10.20.31.1",
                    help="line B source address (--ab: same group and port as A, this source)")
    ap.add_argument("--ab", action="store_true", help="also write line B, a copy of every packet")
    ap.add_argument("--dup-rate", type=float, default=0.0, help="probability a packet is sent twice")
    ap.add_argument("--reorder-rate", type=float, default=0.0, help="probability a frame swaps with one <= 8 later")
    ap.add_argument("--vlan", type=int, nargs="?", const=100, default=0, help="802.1Q tag with this VLAN id (100)")
    ap.add_argument("--max-payload", type=int, default=1200, help="largest UDP payload in bytes")
    ap.add_argument("--date", default="2019-12-30", help="session date, for the capture time stamps")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if len(a.session.encode("ascii")) > 10:
        ap.error("--session is at most 10 characters")
    frames, info = build(a)
    with open(a.out, "wb") as f:
        write_pcapng(f, frames) if a.pcapng else write_pcap(f, frames, a.ns)
    print(f"{a.out}: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
