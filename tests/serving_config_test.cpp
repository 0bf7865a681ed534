// Config files (ModelServerConfig, MonitoringConfig, BatchingParameters text protos) and the
// tensorflow_model_server command line.
#include <gtest/gtest.h>

#include <fstream>

#include "serving/server_config.hpp"
#include "serving/server_flags.hpp"
#include "serving/text_proto.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

using namespace tickinfer::serving;
using tickinfer::Error;

namespace {

std::string error_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ServingConfig, ModelServerConfigAsTfServingDocumentsIt) {
  const auto models = parse_model_server_config(R"(
# two models
model_config_list {
  config {
    name: 'mlp'
    base_path: "/models/mlp"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 42 versions: 43 } }
    version_labels { key: 'stable' value: 42 }
    version_labels { key: 'canary' value: 43 }
  }
  config: { name: "lstm", base_path: "/models/lstm", model_version_policy: { latest: { num_versions: 2 } } }
  config < name: "all" base_path: "/m/all" model_version_policy { all {} } >
}
)", "models.config");
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].name, "mlp");
  EXPECT_EQ(models[0].base_path, "/models/mlp");
  EXPECT_EQ(models[0].policy.kind, VersionPolicy::Kind::Specific);
  EXPECT_EQ(models[0].policy.versions, (std::vector<int64_t>{42, 43}));
  EXPECT_EQ(models[0].labels.at("stable"), 42);
  EXPECT_EQ(models[0].labels.at("canary"), 43);
  EXPECT_EQ(models[1].policy.kind, VersionPolicy::Kind::Latest);
  EXPECT_EQ(models[1].policy.num_versions, 2);
  EXPECT_EQ(models[2].policy.kind, VersionPolicy::Kind::All);
}

TEST(ServingConfig, VersionsInListForm) {
  const auto m = parse_model_server_config(
      "model_config_list { config { name: 'a' base_path: '/a' model_version_policy { specific { versions: [1, 2, 3] } } } }",
      "c");
  EXPECT_EQ(m[0].policy.versions, (std::vector<int64_t>{1, 2, 3}));
}

TEST(ServingConfig, ErrorsNameFileLineAndColumn) {
  struct Case {
    const char* text;
    const char* want;
  };
  const Case cases[] = {
      {"model_config_list {\n  config {\n    nme: 'x'\n  }\n}", "c:3:5: unknown field 'nme' in ModelConfig"},
      {"model_config_list { config { name: 'x' base_path: '/x'", "missing '}' before end of input"},
      {"model_config_list { config { name: 'x' base_path: \"/x } }", "c:1:51: unterminated string"},
      {"model_config_list { config { name: x base_path: '/x' } }", "must be a quoted string"},
      {"model_config_list { config { name: 'x' } }", "needs a base_path"},
      {"model_config_list { config { name: 'a/b' base_path: '/x' } }", "neither '/' nor ':'"},
      {"model_config_list { config { name: 'x' base_path: '/x' model_version_policy { latest { num_versions: 0 } } } }",
       "num_versions must be at least 1"},
      {"model_config_list { config { name: 'x' base_path: '/x' model_version_policy { newest {} } } }",
       "unknown field 'newest'"},
      {"model_config_list { config { name: 'x' base_path: '/x' model_version_policy { specific { versions: 1x } } } }",
       "'1x' is not a 64-bit integer"},
      {"model_config_list { config { name: 'x' base_path: '/x' version_labels { key: 'a' } } }", "needs a non-empty key and a value"},
      {"model_config_list { config { name: 'x' base_path: '/x' model_platform: 'pytorch' } }", "'pytorch' is not supported"},
      {"model_config_list { config { name: 'x' base_path: '/x' } config { name: 'x' base_path: '/y' } }",
       "configured more than once"},
      {"custom_model_config {}", "not supported by tickinfer serve"},
      {"model_config_list {}", "no model"},
      {"model_config_list { config { name: 'x' base_path: '/x' } } }", "c:1:60: expected a field name, found '}'"},
      {"", "no model"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of([&] { parse_model_server_config(c.text, "c"); });
    EXPECT_NE(e.find(c.want), std::string::npos) << "text: " << c.text << "\nerror: " << e;
  }
}

TEST(ServingConfig, DeepNestingIsAnErrorNotACrash) {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "a {";
  EXPECT_NE(error_of([&] { parse_text_proto(deep, "deep"); }).find("nested deeper than 64"), std::string::npos);
}

TEST(ServingConfig, MonitoringConfig) {
  auto m = parse_monitoring_config("prometheus_config { enable: true path: \"/metrics\" }", "m");
  EXPECT_TRUE(m.prometheus_enable);
  EXPECT_EQ(m.prometheus_path, "/metrics");
  m = parse_monitoring_config("prometheus_config { enable: true }", "m");
  EXPECT_EQ(m.prometheus_path, "/monitoring/prometheus/metrics");
  EXPECT_NE(error_of([] { parse_monitoring_config("prometheus_config { enable: yes }", "m"); }).find("true or false"),
            std::string::npos);
}

TEST(ServingConfig, BatchingParametersUseWrapperSyntaxAndTfDefaults) {
  auto b = parse_batching_parameters("max_batch_size { value: 32 } batch_timeout_micros { value: 1000 }\n"
                                     "allowed_batch_sizes: 8 allowed_batch_sizes: 32",
                                     "b");
  EXPECT_EQ(b.max_batch_size, 32);
  EXPECT_EQ(b.batch_timeout_micros, 1000);
  EXPECT_EQ(b.max_enqueued_batches, 10);
  EXPECT_EQ(b.allowed_batch_sizes, (std::vector<int64_t>{8, 32}));
  EXPECT_NE(error_of([] { parse_batching_parameters("max_batch_size: 32", "b"); }).find("must be a message"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_batching_parameters("max_batch_size { value: 16 } allowed_batch_sizes: 8", "b"); })
                .find("must equal max_batch_size"),
            std::string::npos);
}

TEST(ServingFlags, TensorflowModelServerSpellingsBothForms) {
  const auto f = parse_server_flags({"--port=8500", "--rest_api_port", "8501", "--model_name=mlp",
                                     "--model_base_path", "/models/mlp", "--enable_batching=false",
                                     "--file_system_poll_wait_seconds=0.5", "--rest_api_enable_cors_support",
                                     "--rest_api_timeout_in_ms=100", "--noenable_model_warmup",
                                     "--tensorflow_intra_op_parallelism=4"});
  EXPECT_EQ(f.grpc_port, 8500);
  EXPECT_EQ(f.rest_api_port, 8501);
  EXPECT_EQ(f.model_name, "mlp");
  EXPECT_EQ(f.model_base_path, "/models/mlp");
  EXPECT_DOUBLE_EQ(f.file_system_poll_wait_seconds, 0.5);
  EXPECT_TRUE(f.rest_api_enable_cors_support);
  EXPECT_EQ(f.rest_api_timeout_in_ms, 100);
  EXPECT_FALSE(f.enable_model_warmup);
  EXPECT_EQ(f.saved_model_tags, "serve");  // TF Serving's default MetaGraph
  ASSERT_EQ(f.notices.size(), 1u);  // accepted, but said out loud
  EXPECT_NE(f.notices[0].find("tensorflow_intra_op_parallelism"), std::string::npos);
}

TEST(ServingFlags, WhatCannotWorkAndUnknownFlagsAreRefusedByName) {
  const std::vector<std::string> base = {"--rest_api_port=8501", "--model_base_path=/m"};
  auto with = [&](std::string extra) {
    auto a = base;
    a.push_back(std::move(extra));
    return error_of([&] { parse_server_flags(a); });
  };
  EXPECT_NE(with("--grpc_channel_arguments=novalue").find("is not key=value"), std::string::npos);
  EXPECT_NE(with("--grpc_channel_arguments=grpc.max_receive_message_length=x").find("not an integer"), std::string::npos);
  EXPECT_NE(with("--saved_model_tags=").find("no tag given"), std::string::npos);
  EXPECT_EQ(with("--saved_model_tags=serve,gpu"), "");
  EXPECT_NE(with("--use_alts_credentials").find("ALTS is not available"), std::string::npos);
  EXPECT_EQ(with("--use_alts_credentials=false"), "");
  EXPECT_NE(with("--batching_parameters_file=/b").find("needs --enable_batching"), std::string::npos);
  EXPECT_NE(with("--enable_per_model_batching_parameters").find("needs --enable_batching"), std::string::npos);
  EXPECT_NE(with("--model_config_file_poll_wait_seconds=5").find("needs --model_config_file"), std::string::npos);
  EXPECT_NE(with("--rest_api_prot=1").find("unknown flag '--rest_api_prot'"), std::string::npos);
  EXPECT_NE(with("--enable_cors_support").find("did you mean --rest_api_enable_cors_support"), std::string::npos);
  EXPECT_NE(with("--rest_api_num_threads=x").find("not an integer"), std::string::npos);
  EXPECT_NE(with("--nonfinite_inputs=maybe").find("reject or allow"), std::string::npos);
  EXPECT_NE(with("--tflite_engine=fastest").find("'fastest' is not one of auto, interpreter, graph"), std::string::npos);
  EXPECT_EQ(with("--tflite_engine=interpreter"), "");
  EXPECT_NE(with("--device=gpu").find("expected cpu, cuda or cuda:N"), std::string::npos);
  EXPECT_EQ(with("--device=cuda:1"), "");
  EXPECT_EQ(with("--device=cpu"), "");
  EXPECT_EQ(with("--cuda_precision=fp16/fp16,dense=fp32"), "");
  EXPECT_NE(with("--cuda_precision=fp8").find("'fp8' is not fp32, fp16 or bf16"), std::string::npos);
  EXPECT_NE(with("stray").find("unexpected argument"), std::string::npos);
  // gRPC alone (REST off, TF Serving's default) is a valid server.
  EXPECT_EQ(error_of([] { parse_server_flags({"--model_base_path=/m"}); }), "");
  EXPECT_NE(error_of([] { parse_server_flags({"--rest_api_port=8501"}); }).find("--model_base_path"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_server_flags({"--port=1", "--rest_api_port=1", "--model_base_path=/m"}); })
                .find("must differ"),
            std::string::npos);
}

// Every flag tensorflow_model_server's main.cc defines (48), with a deployment's values: all are
// accepted; the ones with nothing to do here say so, each once.
TEST(ServingFlags, EveryFlagOfTensorflowModelServerIsAccepted) {
  const std::vector<std::string> all = {
      "--port=8500", "--grpc_socket_path=/tmp/tfs.sock", "--rest_api_port=8501", "--rest_api_num_threads=8",
      "--rest_api_timeout_in_ms=30000", "--rest_api_enable_cors_support=false", "--enable_batching=true",
      "--allow_version_labels_for_unavailable_models=false", "--batching_parameters_file=/etc/tfs/batching.pbtxt",
      "--enable_per_model_batching_parameters=false", "--model_config_file=/etc/tfs/models.config",
      "--model_config_file_poll_wait_seconds=60", "--model_name=default", "--model_base_path=/models/default",
      "--num_load_threads=4", "--num_unload_threads=2", "--max_num_load_retries=5",
      "--load_retry_interval_micros=60000000", "--file_system_poll_wait_seconds=1", "--flush_filesystem_caches=true",
      "--tensorflow_session_parallelism=0", "--tensorflow_session_config_file=/etc/tfs/session.pbtxt",
      "--tensorflow_intra_op_parallelism=0", "--tensorflow_inter_op_parallelism=0", "--use_alts_credentials=false",
      "--ssl_config_file=/etc/tfs/ssl.pbtxt", "--platform_config_file=/etc/tfs/platform.pbtxt",
      "--per_process_gpu_memory_fraction=0.5", "--saved_model_tags=serve",
      "--grpc_channel_arguments=grpc.max_receive_message_length=67108864,grpc.keepalive_time_ms=30000",
      "--grpc_max_threads=16", "--enable_model_warmup=true", "--num_request_iterations_for_warmup=0", "--version=false",
      "--monitoring_config_file=/etc/tfs/monitoring.pbtxt", "--remove_unused_fields_from_bundle_metagraph=true",
      "--prefer_tflite_model=false", "--num_tflite_pools=4", "--num_tflite_interpreters_per_pool=1",
      "--enable_signature_method_name_check=false", "--xla_cpu_compilation_enabled=false",
      "--xla_gpu_compilation_enabled=false", "--enable_profiler=true",
      "--thread_pool_factory_config_file=/etc/tfs/pool.pbtxt", "--mixed_precision=bfloat16",
      "--skip_initialize_tpu=false", "--enable_grpc_healthcheck_service=true",
      "--enable_serialization_as_tensor_content=false"};
  ASSERT_EQ(all.size(), 48u);
  ServerFlags f;
  ASSERT_EQ(error_of([&] { f = parse_server_flags(all); }), "");
  EXPECT_EQ(f.model_config_file_poll_wait_seconds, 60);
  EXPECT_EQ(f.num_load_threads, 4);
  EXPECT_EQ(f.num_request_iterations_for_warmup, 1);
  EXPECT_EQ(f.grpc_channel_arguments.max_receive_message_bytes, 67108864);
  EXPECT_EQ(f.grpc_channel_arguments.max_send_message_bytes, -1);
  std::string notices;
  for (const auto& n : f.notices) notices += n + "\n";
  for (const char* said : {"num_unload_threads", "tensorflow_session_config_file", "platform_config_file",
                           "per_process_gpu_memory_fraction", "xla_gpu_compilation_enabled", "enable_profiler",
                           "thread_pool_factory_config_file", "mixed_precision=bfloat16", "grpc.keepalive_time_ms=30000",
                           "--model_base_path is ignored"})
    EXPECT_NE(notices.find(said), std::string::npos) << said << "\n" << notices;
}

// The official Docker image's entrypoint puts its flags first; `docker run` arguments follow and,
// the last occurrence winning, override them.
TEST(ServingFlags, DockerEntrypointLastOccurrenceWins) {
  const auto f = parse_server_flags({"--port=8500", "--rest_api_port=8501", "--model_name=model",
                                     "--model_base_path=/models/model", "--model_name=mlp",
                                     "--model_base_path=/srv/mlp", "--rest_api_port=9001"});
  EXPECT_EQ(f.grpc_port, 8500);
  EXPECT_EQ(f.rest_api_port, 9001);
  EXPECT_EQ(f.model_name, "mlp");
  EXPECT_EQ(f.model_base_path, "/srv/mlp");
  std::string notices;
  for (const auto& n : f.notices) notices += n + "\n";
  EXPECT_NE(notices.find("--model_name given more than once: the last value, 'mlp', wins"), std::string::npos) << notices;
}

// The command line deploy/deployment.yaml ships (its `args:` after `serve`) is one this server accepts.
TEST(ServingFlags, TheKubernetesManifestsCommandLineIsAccepted) {
  std::ifstream in(std::string(::tickinfer::test::source_dir()) + "/deploy/deployment.yaml");
  ASSERT_TRUE(in.good());
  std::vector<std::string> args;
  for (std::string line; std::getline(in, line);) {
    const size_t p = line.find("- --");
    if (p != std::string::npos && line.find_first_not_of(' ') == p) args.push_back(line.substr(p + 2));
  }
  ASSERT_GE(args.size(), 4u);
  ServerFlags f;
  ASSERT_EQ(error_of([&] { f = parse_server_flags(args); }), "");
  EXPECT_EQ(f.model_config_file_poll_wait_seconds, 30);
  EXPECT_EQ(f.rest_api_num_threads, 0);  // the thread defaults follow the container's CPU limit
}

TEST(ServingFlags, GrpcChannelArgumentsThatApplyAndTheRest) {
  const auto a = parse_grpc_channel_arguments("grpc.max_send_message_length=1024,grpc.max_receive_message_length=-1,"
                                              "grpc.http2.max_pings_without_data=0");
  EXPECT_EQ(a.max_send_message_bytes, 1024);
  EXPECT_EQ(a.max_receive_message_bytes, 2147483647);  // -1: unlimited, i.e. gRPC's largest
  ASSERT_EQ(a.ignored.size(), 1u);
  EXPECT_EQ(a.ignored[0].first, "grpc.http2.max_pings_without_data");
}

}  // namespace
