"""A real HTTPS origin for B6 and B7: nginx with TLS 1.3 and HTTP/2 on loopback, its certificate
from a test CA made here with openssl (ECDSA P-256, as most CDNs serve today).

The access log has one line per request: msec timestamp, uri, status, body bytes, bytes sent,
request length, TLS session reused ("r" or "."), connection number and its request count. A
`switch` file included by the server block lets B7 turn the origin into a 503 answerer with a
reload, without stopping it.
"""
import os
import subprocess
import time


def openssl(args, cwd):
    subprocess.run(["openssl"] + args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(folder):
    """A CA and a certificate for 127.0.0.1 signed by it; returns (ca.pem, server.pem, server.key)."""
    os.makedirs(folder, exist_ok=True)
    ca, cert, key = (os.path.join(folder, n) for n in ("ca.pem", "server.pem", "server.key"))
    if all(os.path.exists(p) for p in (ca, cert, key)):
        return ca, cert, key
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "30", "-subj", "/CN=cenariusd bench CA"], folder)
    openssl(["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"], folder)
    with open(os.path.join(folder, "server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "30", "-extfile", "server.ext"], folder)
    return ca, cert, key


LOG_FORMAT = "$msec $uri $status $body_bytes_sent $bytes_sent $request_length $ssl_session_reused $connection $connection_requests"


class HttpsNginx:
    """nginx serving `root` over https (h2 offered) on 127.0.0.1:`port`; `keepalive` seconds of idle
    connection kept (nginx's default is 75), `sessions`: "tickets" (nginx's default) or "cache"
    (a shared session cache and no tickets, the other common setup)."""

    def __init__(self, out, root, port, keepalive=75, sessions="tickets", workers=2, name="nginx-tls"):
        self.dir = os.path.join(out, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port
        self.ca, cert, key = make_ca(os.path.join(out, "tls"))
        self.log = os.path.join(self.dir, "access.log")
        self.switch = os.path.join(self.dir, "switch.conf")
        self.set_outage(False, reload=False)
        session_lines = ("ssl_session_cache shared:TLS:10m; ssl_session_tickets off;" if sessions == "cache" else "")
        user = "user root;" if os.geteuid() == 0 else ""
        conf = f"""
{user}
worker_processes {workers};
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
worker_rlimit_nofile 8192;
events {{ worker_connections 4096; }}
http {{
  types {{ text/html html; text/css css; application/javascript js; application/json json; image/png png; }}
  default_type application/octet-stream;
  log_format bench '{LOG_FORMAT}';
  access_log {self.log} bench;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000; keepalive_timeout {keepalive}s;
  client_body_temp_path {self.dir}/body; proxy_temp_path {self.dir}/proxy; fastcgi_temp_path {self.dir}/fastcgi;
  uwsgi_temp_path {self.dir}/uwsgi; scgi_temp_path {self.dir}/scgi;
  server {{
    listen 127.0.0.1:{port} ssl http2;
    ssl_certificate {cert}; ssl_certificate_key {key};
    ssl_protocols TLSv1.3;
    {session_lines}
    root {root};
    etag on;
    include {self.switch};
  }}
}}
"""
        self.conf = os.path.join(self.dir, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        self.start()

    def start(self):
        subprocess.run(["nginx", "-c", self.conf], check=True)
        time.sleep(0.3)

    def url(self, path):
        return f"https://127.0.0.1:{self.port}/{path}"

    def set_outage(self, on, reload=True):
        """On: every request answered 503 with Retry-After absent (the origin is up but failing)."""
        with open(self.switch, "w") as f:
            f.write("return 503;\n" if on else "")
        if reload:
            subprocess.run(["nginx", "-c", self.conf, "-s", "reload"], check=True, stderr=subprocess.DEVNULL)
            time.sleep(0.5)

    def reset_log(self):
        open(self.log, "w").close()
        subprocess.run(["nginx", "-c", self.conf, "-s", "reopen"], stderr=subprocess.DEVNULL)
        time.sleep(0.2)

    def lines(self):
        """The access log as dicts."""
        keys = ["msec", "uri", "status", "body", "sent", "request", "reused", "connection", "requests"]
        rows = []
        for line in open(self.log):
            parts = line.split()
            if len(parts) == len(keys):
                row = dict(zip(keys, parts))
                row["msec"] = float(row["msec"])
                rows.append(row)
        return rows

    def stop(self):
        pid = os.path.join(self.dir, "nginx.pid")
        subprocess.run(["nginx", "-c", self.conf, "-s", "stop"], stderr=subprocess.DEVNULL)
        # Gone when its pid file is: a start right after must find the port free.
        for _ in range(100):
            if not os.path.exists(pid):
                break
            time.sleep(0.05)
