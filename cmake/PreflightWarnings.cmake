# preflight_warnings: an INTERFACE target every preflight target links, so flags live in one place.
add_library(preflight_warnings INTERFACE)
target_compile_options(preflight_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                                                    -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion)
if(PREFLIGHT_SANITIZE)
  target_compile_options(preflight_warnings INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(preflight_warnings INTERFACE -fsanitize=address,undefined)
endif()
