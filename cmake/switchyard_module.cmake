# switchyard_module(NAME [HOT] SOURCES ... DEPS ...)
# One static library per subsystem; its DEPS are the architecture's dependency rule. HOT: a
# request's path runs through it, and it is built with SWITCHYARD_HOT_PATH_OPTIONS.
function(switchyard_module name)
    cmake_parse_arguments(ARG "HOT" "" "SOURCES;DEPS" ${ARGN})
    add_library(sy_${name} STATIC ${ARG_SOURCES})
    if(ARG_HOT)
        target_compile_options(sy_${name} PRIVATE ${SWITCHYARD_HOT_PATH_OPTIONS})
    endif()
    target_include_directories(sy_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(sy_${name} PUBLIC ${ARG_DEPS})
endfunction()
