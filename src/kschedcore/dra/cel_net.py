"""Kubernetes' IP and CIDR CEL libraries (apiserver ``cel/library/ip.go``, ``cidr.go``) over
Go's ``net/netip`` semantics: no zones, no IPv4-mapped IPv6 addresses, a CIDR keeps its
address bits (``masked()`` clears them), Go's ``IsGlobalUnicast`` (private ranges count)."""
from __future__ import annotations

import ipaddress

from .cel_values import CELRuntimeError, NO_SUCH_OVERLOAD


class IP:
    """A ``net.IP`` value."""
    __slots__ = ("addr",)
    cel_type = "net.IP"

    def __init__(self, addr):
        self.addr = addr

    def __eq__(self, other):
        return isinstance(other, IP) and self.addr == other.addr

    def __hash__(self):
        return hash(self.addr)

    def __str__(self):
        return str(self.addr)


class CIDR:
    """A ``net.CIDR`` value: an address and a prefix length."""
    __slots__ = ("addr", "bits")
    cel_type = "net.CIDR"

    def __init__(self, addr, bits: int):
        self.addr, self.bits = addr, bits

    def __eq__(self, other):
        return isinstance(other, CIDR) and (self.addr, self.bits) == (other.addr, other.bits)

    def __hash__(self):
        return hash((self.addr, self.bits))

    def __str__(self):
        return f"{self.addr}/{self.bits}"

    def network(self):
        return ipaddress.ip_network(f"{self.addr}/{self.bits}", strict=False)


def _ipv4_error(s: str) -> str:
    """Go's ``parseIPv4`` reason for a string that is not a dotted IPv4 address."""
    pos = val = digits = 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if digits == 1 and val == 0:
                return "IPv4 field has octet with leading zero"
            val, digits = val * 10 + int(c), digits + 1
            if val > 255:
                return "IPv4 field has value >255"
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                return f'IPv4 field must have at least one digit (at "{s[i:]}")'
            if pos == 3:
                return "IPv4 address too long"
            pos, val, digits = pos + 1, 0, 0
        else:
            return f'unexpected character (at "{s[i:]}")'
    return "IPv4 address too short" if pos < 3 else "unable to parse IP"


def _parse_addr(raw: str):
    """``netip.ParseAddr``; a (address, zone) tuple for a zoned IPv6 address; raises
    ValueError with Go's ``ParseAddr("x"): reason``."""
    if ":" in raw:
        text, _, zone = raw.partition("%")
        try:
            addr = ipaddress.IPv6Address(text)
        except ValueError:
            raise ValueError(f'ParseAddr("{raw}"): unable to parse IP') from None
        return (addr, zone) if zone else addr
    if "." in raw:
        try:
            return ipaddress.IPv4Address(raw)
        except ValueError:
            raise ValueError(f'ParseAddr("{raw}"): {_ipv4_error(raw)}') from None
    raise ValueError(f'ParseAddr("{raw}"): unable to parse IP')


def parse_ip(raw: str) -> IP:
    """``ip(string)`` with the library's errors."""
    try:
        addr = _parse_addr(raw)
    except ValueError as err:
        raise CELRuntimeError(f'IP Address "{raw}" parse error during conversion from string: {err}') from None
    if isinstance(addr, tuple):
        raise CELRuntimeError(f'IP address "{raw}" with zone value is not allowed')
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELRuntimeError(f'IPv4-mapped IPv6 address "{raw}" is not allowed')
    return IP(addr)


def parse_cidr(raw: str) -> CIDR:
    """``cidr(string)`` with the library's errors."""
    prefix = "network address parse error during conversion from string: "
    if "/" not in raw:
        raise CELRuntimeError(f"{prefix}{prefix}netip.ParsePrefix(\"{raw}\"): no '/'")
    addr_text, bits_text = raw.rsplit("/", 1)
    try:
        addr = _parse_addr(addr_text)
    except ValueError as err:
        raise CELRuntimeError(f'{prefix}{prefix}netip.ParsePrefix("{raw}"): {err}') from None
    if isinstance(addr, tuple):
        raise CELRuntimeError(f'{prefix}{prefix}netip.ParsePrefix("{raw}"): IPv6 zones cannot be present in a prefix')
    limit = 32 if addr.version == 4 else 128
    if not bits_text.isdigit() or (len(bits_text) > 1 and bits_text[0] == "0"):
        raise CELRuntimeError(f'{prefix}{prefix}netip.ParsePrefix("{raw}"): bad bits after slash: "{bits_text}"')
    if int(bits_text) > limit:
        raise CELRuntimeError(f'{prefix}{prefix}netip.ParsePrefix("{raw}"): prefix length out of range')
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELRuntimeError(f'{prefix}IPv4-mapped IPv6 address "{raw}" is not allowed')
    return CIDR(addr, int(bits_text))


def _ok(parse, raw: str) -> bool:
    try:
        parse(raw)
        return True
    except CELRuntimeError:
        return False


def is_canonical(raw: str) -> bool:
    return str(parse_ip(raw).addr) == raw


def global_unicast(ip: IP) -> bool:
    """Go's ``Addr.IsGlobalUnicast``."""
    a = ip.addr
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255"))


def link_local_multicast(ip: IP) -> bool:
    a = ip.addr
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a.is_multicast and (int(a) >> 112) & 0xF == 2


def contains_ip(c: CIDR, other) -> bool:
    if isinstance(other, str):
        try:
            other = parse_ip(other)
        except CELRuntimeError:
            raise CELRuntimeError(NO_SUCH_OVERLOAD) from None
    return other.addr.version == c.addr.version and other.addr in c.network()


def contains_cidr(c: CIDR, other) -> bool:
    if isinstance(other, str):
        try:
            other = parse_cidr(other)
        except CELRuntimeError:
            raise CELRuntimeError(NO_SUCH_OVERLOAD) from None
    return (other.addr.version == c.addr.version and other.bits >= c.bits
            and other.network().subnet_of(c.network()))


def masked(c: CIDR) -> CIDR:
    return CIDR(c.network().network_address, c.bits)


IP_T, CIDR_T = "net.IP", "net.CIDR"


def functions(g, m, S, I, B):
    """The libraries' overloads, in cel_lib's table form (``g`` global, ``m`` member)."""
    return {
        "ip": [g([S], parse_ip, IP_T), m([CIDR_T], lambda c: IP(c.addr), IP_T)],
        "isIP": [g([S], lambda s: _ok(parse_ip, s), B)],
        "ip.isCanonical": [g([S], is_canonical, B)],
        "family": [m([IP_T], lambda ip: ip.addr.version, I)],
        "isUnspecified": [m([IP_T], lambda ip: ip.addr.is_unspecified, B)],
        "isLoopback": [m([IP_T], lambda ip: ip.addr.is_loopback, B)],
        "isLinkLocalMulticast": [m([IP_T], link_local_multicast, B)],
        "isLinkLocalUnicast": [m([IP_T], lambda ip: ip.addr.is_link_local and not ip.addr.is_multicast, B)],
        "isGlobalUnicast": [m([IP_T], global_unicast, B)],
        "cidr": [g([S], parse_cidr, CIDR_T)],
        "isCIDR": [g([S], lambda s: _ok(parse_cidr, s), B)],
        "containsIP": [m([CIDR_T, S], contains_ip, B), m([CIDR_T, IP_T], contains_ip, B)],
        "containsCIDR": [m([CIDR_T, S], contains_cidr, B), m([CIDR_T, CIDR_T], contains_cidr, B)],
        "prefixLength": [m([CIDR_T], lambda c: c.bits, I)],
        "masked": [m([CIDR_T], masked, CIDR_T)],
    }
