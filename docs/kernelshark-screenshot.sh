#!/bin/sh
# Makes docs/kernelshark.png: KernelShark (Debian kernelshark 2.2.1) showing the
# trace.dat of a kisim run, under Xvfb. Needs: apt-get install kernelshark xvfb x11-apps;
# run from the repository with the venv's kisim and python on PATH (or KISIM, PYTHON).
# KernelShark runs as nobody: as root it first shows a warning dialog.
set -eu
KISIM=${KISIM:-kisim}
PYTHON=${PYTHON:-python3}
OUT=$(pwd)/docs/kernelshark.png
WORK=$(mktemp -d)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
"$KISIM" trace --arch x86_64 --cpus 2 --workload kmalloc --probes kmem,sched \
    --format trace-cmd --out "$WORK/t" >/dev/null
mkdir -m 777 "$WORK/home"
cat > "$WORK/shot.sh" <<SHOT
#!/bin/sh
setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$WORK/home \
    XDG_RUNTIME_DIR=$WORK/home kernelshark -geometry 1280x800+0+0 $WORK/t/trace.dat \
    >$WORK/kernelshark.log 2>&1 &
sleep 20
xwd -root -silent > $WORK/screen.xwd
kill \$!
SHOT
chmod +x "$WORK/shot.sh"
xvfb-run -a -s "-ac -screen 0 1280x800x24" "$WORK/shot.sh"
"$PYTHON" - "$WORK/screen.xwd" "$OUT" <<'PY'
import struct, sys
from PIL import Image
raw = open(sys.argv[1], "rb").read()
f = struct.unpack(">25I", raw[:100])          # XWDFileHeader (X11 XWDFile.h), big-endian
width, height, byte_order, bpp, line = f[4], f[5], f[7], f[11], f[12]
pixels = raw[f[0] + f[19] * 12:]              # after the header and the colormap
mode = {(32, 0): "BGRX", (32, 1): "XRGB", (24, 0): "BGR", (24, 1): "RGB"}[(bpp, byte_order)]
Image.frombuffer("RGB", (width, height), pixels[:line * height], "raw", mode, line, 1) \
    .save(sys.argv[2], optimize=True)
PY
echo "wrote $OUT"
