#!/usr/bin/python3
"""A stand-in for /dev/log or $NOTIFY_SOCKET: receive datagrams on a unix socket and append each
to a file as one line "mounted=yes|no<TAB>text" (newlines in the text shown as '|'), where
"mounted" says whether MOUNTPOINT was a mount point when the datagram arrived ("-": not checked,
as for a log socket: stat()ing the pool while the daemon waits to send its log line would
deadlock, the daemon blocks on a full log socket as glibc's syslog() does).

usage: dgram_sink.py SOCKET OUTFILE MOUNTPOINT READYFILE
SOCKET "@name" is an abstract socket (as in $NOTIFY_SOCKET). Creates READYFILE once bound; runs
until killed."""
import os
import socket
import sys


def main():
    path, out, mountpoint, ready = sys.argv[1:5]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind('\0' + path[1:] if path.startswith('@') else path)
    open(ready, 'w').close()
    with open(out, 'a', buffering=1) as f:
        while True:
            text = s.recv(65536).decode(errors='replace').rstrip('\n').replace('\n', '|')
            mounted = '-' if mountpoint == '-' else 'yes' if os.path.ismount(mountpoint) else 'no'
            f.write('mounted=%s\t%s\n' % (mounted, text))


if __name__ == '__main__':
    main()
