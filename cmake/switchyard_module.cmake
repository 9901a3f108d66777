# switchyard_module(NAME SOURCES ... DEPS ...)
# One static library per subsystem; its DEPS are the architecture's dependency rule.
function(switchyard_module name)
    cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
    add_library(sy_${name} STATIC ${ARG_SOURCES})
    target_include_directories(sy_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(sy_${name} PUBLIC ${ARG_DEPS})
endfunction()
