# Injected with -DCMAKE_PROJECT_INCLUDE=... when building against the ROS 2 wheels from PyPI.
#
# The wheels' exported CMake targets (e.g. *__rosidl_generator_pyExport.cmake) name the include
# directories of the machine that built them (/opt/python/cp3XX-cp3XX/include/python3.X and its
# numpy include dir). Those paths do not exist here, and CMake refuses imported targets whose
# INTERFACE_INCLUDE_DIRECTORIES do not exist. Instead of editing files inside the venv (which a
# wheel reinstall undoes), we repair the imported targets in memory at the end of configuration.
# On a real ROS install no target names /opt/python/..., so this changes nothing.

cmake_minimum_required(VERSION 3.19)

find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
if(Python3_Interpreter_FOUND)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c "import numpy; print(numpy.get_include())"
    OUTPUT_VARIABLE _cookwala_numpy_include
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
endif()

function(_cookwala_repair_targets_in_dir dir)
  get_property(_targets DIRECTORY "${dir}" PROPERTY IMPORTED_TARGETS)
  foreach(_t IN LISTS _targets)
    get_target_property(_incs ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _incs)
      continue()
    endif()
    set(_new "")
    set(_changed FALSE)
    foreach(_inc IN LISTS _incs)
      if(_inc MATCHES "^/opt/python/" AND NOT EXISTS "${_inc}")
        set(_changed TRUE)
      else()
        list(APPEND _new "${_inc}")
      endif()
    endforeach()
    if(_changed)
      if(Python3_INCLUDE_DIRS)
        list(APPEND _new ${Python3_INCLUDE_DIRS})
      endif()
      if(_cookwala_numpy_include)
        list(APPEND _new "${_cookwala_numpy_include}")
      endif()
      list(REMOVE_DUPLICATES _new)
      set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_new}")
      message(STATUS "cookwala: repaired wheel include dirs of ${_t}")
    endif()
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_sub IN LISTS _subdirs)
    _cookwala_repair_targets_in_dir("${_sub}")
  endforeach()
endfunction()

function(_cookwala_repair_wheel_include_dirs)
  _cookwala_repair_targets_in_dir("${CMAKE_SOURCE_DIR}")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _cookwala_repair_wheel_include_dirs)
