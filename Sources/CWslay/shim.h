// wslay (Debian's libwslay-dev, 1.1.1): the WebSocket frame codec the web listener uses
// (Sources/WebSocket/FrameLink.swift). The package ships no pkg-config file, hence a module map
// with `link "wslay"` and no pkgConfig in Package.swift. Nothing here needs a shim: wslay's API
// has no variadic functions and no macros Swift cannot import.
#ifndef SWIPED_CWSLAY_SHIM_H
#define SWIPED_CWSLAY_SHIM_H
#include <sys/types.h>
#include <wslay/wslay.h>
#endif
