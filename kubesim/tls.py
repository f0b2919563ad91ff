"""A throw-away CA and serving certificate, so kubeconfigs can point at HTTPS.

kubectl and every client-go program only send bearer tokens over TLS (clientcmd drops the
credentials for plain-HTTP servers), so kubesim's kubeconfig server must be HTTPS. Keys are
ECDSA P-256, minted once per process and per host set; nothing touches the disk for longer than
the SSL context takes to load it.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = timedelta(days=3650)


@dataclass(frozen=True)
class ServingCert:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        with tempfile.TemporaryDirectory(prefix="kubesim-tls-") as d:
            cert, key = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
            with open(cert, "wb") as f:
                f.write(self.cert_pem + self.ca_pem)
            fd = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(self.key_pem)
            ctx.load_cert_chain(cert, key)
        return ctx


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@functools.lru_cache(maxsize=8)
def serving_cert(hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> ServingCert:
    """A CA plus a server certificate valid for ``hosts`` (IP addresses or DNS names)."""
    now = datetime.now(timezone.utc) - timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder()
          .subject_name(_name("kubesim-ca")).issuer_name(_name("kubesim-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now).not_valid_after(now + VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names = list(dict.fromkeys((*hosts, "localhost", "kubernetes", "kubernetes.default.svc")))
    cert = (x509.CertificateBuilder()
            .subject_name(_name("kubesim-apiserver")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + VALIDITY)
            .add_extension(x509.SubjectAlternativeName([_san(h) for h in names]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return ServingCert(
        ca.public_bytes(pem), cert.public_bytes(pem),
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
