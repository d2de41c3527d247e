"""The address other phones should open, and its QR code."""

from __future__ import annotations

import io
import socket
from urllib.parse import urlsplit

import segno


def lan_address() -> str | None:
    """This machine's address on the local network (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            # connect() on UDP only picks the outgoing interface.
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def join_urls(host_url: str, public_url: str | None = None) -> list[str]:
    """Addresses to offer, best first: the configured one, the one this phone
    used (unless it is the machine itself), the LAN address and hostname.local."""
    if public_url:
        return [public_url.rstrip("/") + "/"]
    parts = urlsplit(host_url)
    port = parts.port
    suffix = "" if port in (None, 80) else f":{port}"
    urls: list[str] = []
    host = (parts.hostname or "").lower()
    if host and host not in ("localhost", "127.0.0.1", "::1", "0.0.0.0"):
        urls.append(f"{parts.scheme}://{parts.netloc}/")
    address = lan_address()
    if address:
        urls.append(f"http://{address}{suffix}/")
    name = socket.gethostname().split(".")[0]
    if name and name != "localhost":
        urls.append(f"http://{name}.local{suffix}/")
    if not urls:
        urls.append(f"{parts.scheme}://{parts.netloc}/")
    return list(dict.fromkeys(urls))


def qr_svg(url: str, standalone: bool = False) -> str:
    """An SVG QR code (dark on white, with its quiet zone); inline in a page, or a file of its own."""
    qr = segno.make(url, error="m")
    if not standalone:
        # omitsize: a viewBox instead of a fixed size, so CSS can scale it to the screen
        return qr.svg_inline(scale=6, dark="#111", light="#fff", omitsize=True)
    out = io.BytesIO()
    qr.save(out, kind="svg", scale=6, dark="#111", light="#fff")
    return out.getvalue().decode()
