# The one place that decides the optional TLS feature of `vramdoc watch --serve --web-config`.
# It needs OpenSSL 3's headers at build time (libssl-dev); libssl.so.3 itself is opened with
# dlopen when a web config asks for TLS, so the binary still starts on a machine without it
# (as NVML is opened: docs/security.md, "Decisions"). VRAMDOC_TLS=AUTO builds it when the headers
# are found, ON requires them, OFF leaves it out.
set(VRAMDOC_TLS AUTO CACHE STRING "TLS for the exporter (OpenSSL 3 headers): AUTO, ON or OFF")
set_property(CACHE VRAMDOC_TLS PROPERTY STRINGS AUTO ON OFF)
set(VRAMDOC_HAVE_TLS 0)
if(NOT VRAMDOC_TLS STREQUAL "OFF")
  find_path(OPENSSL3_INCLUDE_DIR openssl/opensslv.h)
  if(OPENSSL3_INCLUDE_DIR)
    file(STRINGS ${OPENSSL3_INCLUDE_DIR}/openssl/opensslv.h _ssl_major REGEX "^# *define +OPENSSL_VERSION_MAJOR +[0-9]+")
    string(REGEX MATCH "[0-9]+$" _ssl_major "${_ssl_major}")
    if(_ssl_major AND _ssl_major GREATER_EQUAL 3 AND EXISTS ${OPENSSL3_INCLUDE_DIR}/openssl/ssl.h)
      set(VRAMDOC_HAVE_TLS 1)
    endif()
  endif()
  if(NOT VRAMDOC_HAVE_TLS AND VRAMDOC_TLS STREQUAL "ON")
    message(FATAL_ERROR "VRAMDOC_TLS=ON but OpenSSL 3 headers were not found (apt install libssl-dev)")
  endif()
endif()
message(STATUS "vramdoc: TLS for the exporter ${VRAMDOC_HAVE_TLS}")
