"""tests/programs: an AF_UNIX echo server and its client, for the unix_socket case (cases.sh).

    echo_unix.py serve PATH        bind PATH (socketserver.UnixStreamServer), echo one line of one
                                   client, exit; the socket file is left behind, as servers do
    echo_unix.py connect PATH MSG  connect to PATH (retrying for up to 30 s while the server is
                                   not listening yet), send MSG, print the line that comes back
"""
import socket
import socketserver
import sys
import time


class Echo(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(self.rfile.readline())


def serve(path):
    with socketserver.UnixStreamServer(path, Echo) as server:
        server.handle_request()


def connect(path, msg):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        # The server binds, then listens: between the two (or before) a connect is refused. The
        # bound is against hanging, not a timing check.
        end = time.monotonic() + 30
        while True:
            try:
                c.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > end:
                    raise
                time.sleep(0.05)
        c.sendall(msg.encode() + b'\n')
        with c.makefile('rb') as f:
            print(f.readline().decode().rstrip('\n'))


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'serve':
        serve(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == 'connect':
        connect(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
