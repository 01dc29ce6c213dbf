# bentoclaw user C module for CMake-based MicroPython ports (rp2, esp32, ...):
#   make USER_C_MODULES=<repo root>/mpy/micropython.cmake
# The Rust staticlib comes from cmake/bentoclaw.cmake (cargo runs as part of
# the build; the archive is an IMPORTED library that the firmware links
# after the objects and relinks when it changes). Cache variables:
#   BENTOCLAW_PORT_FIRMWARE  (below; OFF: the unix test transport, claw_transport.h)
#   BENTOCLAW_RUST_TARGET, BENTO_HAS_MPY (OFF/0: nothing of this module): see cmake/bentoclaw.cmake

option(BENTOCLAW_PORT_FIRMWARE "use the firmware's claw_https_* and IPC pipe" ON)

include(${CMAKE_CURRENT_LIST_DIR}/../cmake/bentoclaw.cmake)
if(NOT BENTO_HAS_MPY)
    return()
endif()

add_library(usermod_bentoclaw INTERFACE)
target_sources(usermod_bentoclaw INTERFACE
    ${CMAKE_CURRENT_LIST_DIR}/modbentoclaw.c
    ${CMAKE_CURRENT_LIST_DIR}/claw_port_vfs.c
    ${CMAKE_CURRENT_LIST_DIR}/claw_tools.c
)
if(BENTOCLAW_PORT_FIRMWARE)
    target_compile_definitions(usermod_bentoclaw INTERFACE BENTOCLAW_PORT_FIRMWARE=1)
else()
    target_sources(usermod_bentoclaw INTERFACE ${CMAKE_CURRENT_LIST_DIR}/claw_transport_unix.c)
    target_compile_definitions(usermod_bentoclaw INTERFACE BENTOCLAW_PORT_FIRMWARE=0)
endif()
# The include dirs are listed here as well as on the imported library,
# because MicroPython's QSTR scan gathers INTERFACE_INCLUDE_DIRECTORIES
# from the usermod targets (py/usermod.cmake).
target_include_directories(usermod_bentoclaw INTERFACE ${CMAKE_CURRENT_LIST_DIR} ${BENTOCLAW_INCLUDE_DIR})
target_link_libraries(usermod_bentoclaw INTERFACE bentoclaw::bentoclaw)
target_link_libraries(usermod INTERFACE usermod_bentoclaw)
