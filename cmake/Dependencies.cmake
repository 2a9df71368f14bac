# Every external package, found once, in the ways that work with Debian 12's packages
# (see ../shared/PLATFORM.md): module mode for Protobuf, CONFIG for gRPC/absl/prometheus/GTest,
# pkg-config for libpqxx, and a hand-made imported target for Connector/C++.
find_package(Threads REQUIRED)
find_package(Protobuf 3.21 REQUIRED)
find_package(gRPC 1.51 CONFIG REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx>=6.4)

find_library(MYSQLCPPCONN_LIBRARY mysqlcppconn REQUIRED)
find_path(MYSQLCPPCONN_INCLUDE_DIR mysql_driver.h REQUIRED)
find_package(Boost REQUIRED)
add_library(dbload_mysqlcppconn INTERFACE)
target_link_libraries(dbload_mysqlcppconn INTERFACE ${MYSQLCPPCONN_LIBRARY} Boost::headers)
target_include_directories(dbload_mysqlcppconn SYSTEM INTERFACE ${MYSQLCPPCONN_INCLUDE_DIR})

find_package(prometheus-cpp CONFIG REQUIRED)
find_package(GTest CONFIG REQUIRED)
if(DBLOAD_BENCH)
  find_package(benchmark REQUIRED)
endif()
