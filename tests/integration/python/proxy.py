# SPDX-License-Identifier: MIT
"""A TCP proxy in front of tenured for the client tests: it can delay every
answer (to show safe time counts from the sending), cut every connection
and refuse new ones for a while (to show the event stream resumes), or
swallow requests (to show a timeout is reported as such)."""
from __future__ import annotations

import socket
import threading
import time
from typing import List, Tuple

from conftest import free_port


class Proxy:
    def __init__(self, target_port: int, delay_s: float = 0.0) -> None:
        self.target = ("127.0.0.1", target_port)
        self.delay_s = delay_s
        self.refuse = False  # accept, then close at once
        self.blackhole = False  # accept, read, never answer
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._ls = socket.socket()
        self._ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._ls.bind(("127.0.0.1", self.port))
        self._ls.listen(64)
        self._conns: List[Tuple[socket.socket, socket.socket]] = []
        self._mu = threading.Lock()
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                c, _ = self._ls.accept()
            except OSError:
                return
            if self.refuse:
                c.close()
                continue
            if self.blackhole:
                with self._mu:
                    self._conns.append((c, c))
                continue
            try:
                s = socket.create_connection(self.target, timeout=5)
            except OSError:
                c.close()
                continue
            s.settimeout(None)
            with self._mu:
                self._conns.append((c, s))
            threading.Thread(target=self._pump, args=(c, s, 0.0),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(s, c, self.delay_s),
                             daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket,
              delay: float) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if delay:
                    time.sleep(delay)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut_all(self) -> None:
        """Break every open connection, as a network cut would."""
        with self._mu:
            conns, self._conns = self._conns, []
        for a, b in conns:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        self._stop = True
        self._ls.close()
        self.cut_all()
