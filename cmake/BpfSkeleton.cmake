# Builds a BPF object with clang -target bpf and turns it into a skeleton header.
find_program(CLANG_BPF NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)

# bpf_object(<name> <source>): produces ${CMAKE_CURRENT_BINARY_DIR}/<name>.bpf.o
function(bpf_object name src)
	set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
	execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
		OUTPUT_VARIABLE multiarch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
	set(arch_inc)
	if(multiarch)
		set(arch_inc -idirafter /usr/include/${multiarch})
	endif()
	add_custom_command(OUTPUT ${obj}
		COMMAND ${CLANG_BPF} -g -O2 -target bpf -Wall -Werror
			-I${PROJECT_SOURCE_DIR}/include ${arch_inc}
			-c ${src} -o ${obj}
		DEPENDS ${src} ${PROJECT_SOURCE_DIR}/include/linerate/probe.h
			${PROJECT_SOURCE_DIR}/include/linerate/flow.h
			${PROJECT_SOURCE_DIR}/include/linerate/live.h
		COMMENT "BPF ${name}")
endfunction()

# bpf_skeleton(<name> <source>): produces ${CMAKE_CURRENT_BINARY_DIR}/<name>.skel.h
function(bpf_skeleton name src)
	set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
	set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
	bpf_object(${name} ${src})
	add_custom_command(OUTPUT ${skel}
		COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
		DEPENDS ${obj}
		COMMENT "skeleton ${name}")
	add_custom_target(${name}_skel DEPENDS ${skel})
endfunction()
