"""Keys: RFC 3339 instants, public KeyRecords (validity and revocation) and private signing keys.

A KeyRecord binds a public key to a `kid` for a window of time (CORE §5). Whether a key may
vouch for a signature is decided at the signature's own `signedAt`, never at "now": the
signing time is covered by the signature, so a verifier can trust it.

Edges (our reading of CORE §5, the same as the reference verifier):
- valid from `validFrom` inclusive to `validTo` inclusive;
- revoked from `revokedAt` inclusive: a signature made at the instant of revocation is
  already invalid (fail closed).

Private key file format (ours, JSON): {"kid", "alg": "EdDSA", "privateKey": base64url of the
32-byte Ed25519 seed, optional "actor", "validFrom"}.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import decimal
import os
import re
from typing import Any, Iterable

import nacl.exceptions
import nacl.signing

SUPPORTED_ALGS = ("EdDSA",)

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$"
)


class InvalidTimestamp(ValueError):
    """A date-time that is not RFC 3339 with an offset."""


@dataclasses.dataclass(frozen=True, order=True)
class Instant:
    """An exact point in time: whole UTC epoch seconds plus a decimal fraction (any precision)."""

    seconds: int
    fraction: decimal.Decimal = decimal.Decimal(0)


def parse_instant(text: Any) -> Instant:
    """Parse an RFC 3339 date-time; anything else raises InvalidTimestamp (callers fail closed)."""
    match = _RFC3339.match(text) if isinstance(text, str) else None
    if not match:
        raise InvalidTimestamp(f"{text!r} is not an RFC 3339 date-time with an offset")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        base = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    except ValueError as exc:
        raise InvalidTimestamp(f"{text!r}: {exc}") from None
    offset = 0
    if match.group(9):
        oh, om = int(match.group(10)), int(match.group(11))
        if oh > 23 or om > 59:
            raise InvalidTimestamp(f"{text!r}: offset out of range")
        offset = (oh * 3600 + om * 60) * (1 if match.group(9) == "+" else -1)
    epoch = int((base - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)).total_seconds()) - offset
    fraction = decimal.Decimal("0" + match.group(7)) if match.group(7) else decimal.Decimal(0)
    return Instant(epoch, fraction)


def now_rfc3339() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def b64u_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_decode(text: str) -> bytes:
    """Decode unpadded base64url strictly (no other alphabet, no stray characters)."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None


class KeyStatus:
    """Why a key record may not vouch for a signature (values are verification reasons)."""

    OK = "ok"
    INVALID_TIMESTAMP = "invalid_timestamp"
    NOT_VALID = "key_not_valid_at_signing_time"
    REVOKED = "key_revoked"


def key_status_at(record: dict, when: Instant) -> str:
    """KeyStatus of a KeyRecord dict at the signing instant `when` (window first, then revocation)."""
    try:
        if when < parse_instant(record.get("validFrom")):
            return KeyStatus.NOT_VALID
        if record.get("validTo") and when > parse_instant(record["validTo"]):
            return KeyStatus.NOT_VALID
        if record.get("revokedAt") and when >= parse_instant(record["revokedAt"]):
            return KeyStatus.REVOKED
    except InvalidTimestamp:
        return KeyStatus.INVALID_TIMESTAMP
    return KeyStatus.OK


def find_key(keys: Iterable[Any], kid: Any) -> dict | None:
    """The first KeyRecord with this kid (records that are not objects are ignored)."""
    if not isinstance(kid, str):
        return None
    return next((k for k in keys if isinstance(k, dict) and k.get("kid") == kid), None)


def verify_ed25519(public_key_b64u: str, signature_b64u: str, message: bytes) -> bool:
    try:
        key = nacl.signing.VerifyKey(b64u_decode(public_key_b64u))
        key.verify(message, b64u_decode(signature_b64u))
        return True
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.ValueError, nacl.exceptions.TypeError,
            ValueError, TypeError):
        return False


class KeyFileError(ValueError):
    """A key or key-record file that cannot be used (the message names the file and field)."""


def parse_key_records(data: Any, source: str = "key records") -> list[dict]:
    """KeyRecords from a list, a single record, or an object with a `keys` list (e.g. a
    /.well-known/cookwala.json or capabilities document)."""
    if isinstance(data, dict) and "kid" in data:
        data = [data]
    elif isinstance(data, dict) and isinstance(data.get("keys"), list):
        data = data["keys"]
    if not isinstance(data, list):
        raise KeyFileError(f"{source}: expected a KeyRecord, a list of them, or an object with a 'keys' list")
    for i, record in enumerate(data):
        if not isinstance(record, dict):
            raise KeyFileError(f"{source}: /{i} is not an object")
        for field in ("kid", "alg", "publicKey", "validFrom"):
            if not isinstance(record.get(field), str):
                raise KeyFileError(f"{source}: /{i}/{field} is missing or not a string")
    return data


def parse_key_file(raw: bytes, source: str) -> list[dict]:
    """KeyRecords from a JSON or YAML file's bytes; KeyFileError naming `source` for text that is
    not UTF-8, nested too deeply or of the wrong shape (a trusted-keys file is read at start-up)."""
    from cookwala_ros.core import yaml_limits

    try:
        data = yaml_limits.loads(raw)  # JSON is YAML here: one bounded reader for both
    except yaml_limits.YamlInputError as exc:
        raise KeyFileError(f"{source}: {exc}") from None
    return parse_key_records(data, source)


@dataclasses.dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key with the kid it signs as."""

    kid: str
    seed: bytes
    actor: str | None = None
    valid_from: str | None = None
    alg: str = "EdDSA"

    def __post_init__(self) -> None:
        if len(self.seed) != 32:
            raise KeyFileError(f"an Ed25519 seed is 32 bytes, got {len(self.seed)}")
        if not self.kid:
            raise KeyFileError("a signing key needs a kid")

    @classmethod
    def generate(cls, kid: str, actor: str | None = None, valid_from: str | None = None) -> "SigningKey":
        return cls(kid=kid, seed=os.urandom(32), actor=actor, valid_from=valid_from)

    def sign(self, message: bytes) -> bytes:
        return nacl.signing.SigningKey(self.seed).sign(message).signature

    @property
    def public_key(self) -> str:
        return b64u_encode(bytes(nacl.signing.SigningKey(self.seed).verify_key))

    def key_record(self, valid_from: str | None = None) -> dict:
        """The public KeyRecord a verifier needs to trust this key."""
        record = {"kid": self.kid, "alg": self.alg, "publicKey": self.public_key,
                  "validFrom": valid_from or self.valid_from or now_rfc3339()}
        if self.actor:
            record["actor"] = self.actor
        return record

    def to_json(self) -> dict:
        data = {"kid": self.kid, "alg": self.alg, "privateKey": b64u_encode(self.seed)}
        if self.actor:
            data["actor"] = self.actor
        if self.valid_from:
            data["validFrom"] = self.valid_from
        return data

    @classmethod
    def from_json(cls, data: Any, source: str = "key file") -> "SigningKey":
        if not isinstance(data, dict):
            raise KeyFileError(f"{source}: expected an object with kid, alg and privateKey")
        if data.get("alg", "EdDSA") != "EdDSA":
            raise KeyFileError(f"{source}: /alg {data.get('alg')!r} is not supported (only EdDSA keys can sign)")
        for field in ("kid", "privateKey"):
            if not isinstance(data.get(field), str) or not data[field]:
                raise KeyFileError(f"{source}: /{field} is missing or not a string")
        try:
            seed = b64u_decode(data["privateKey"])
        except ValueError:
            raise KeyFileError(f"{source}: /privateKey is not base64url") from None
        if len(seed) != 32:
            raise KeyFileError(f"{source}: /privateKey must decode to a 32-byte Ed25519 seed, got {len(seed)} bytes")
        return cls(kid=data["kid"], seed=seed, actor=data.get("actor"), valid_from=data.get("validFrom"))
