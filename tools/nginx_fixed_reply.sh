# Sourced by the serving benchmarks: nginx (1 worker, no master) answering every request on
# 127.0.0.1:PORT with the same JSON body and 200, the HTTP floor the servers are held to.
# start_nginx_fixed_reply WORK_DIR PORT CPU BODY: writes WORK_DIR/nginx/nginx.conf, starts nginx
# pinned to CPU in the background (its pid in NGINX_PID), and returns once it answers.
start_nginx_fixed_reply() {
  local work=$1 port=$2 cpu=$3 body=$4 escaped
  escaped=$(printf '%s' "$body" | tr '\n' ' ' | sed "s/'/\\\\'/g")
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  keepalive_requests 100000000;
  keepalive_timeout 600s;
  server {
    listen 127.0.0.1:$port;
    location / { default_type application/json; return 200 '$escaped'; }
  }
}
CONF
  taskset -c "$cpu" nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
  NGINX_PID=$!
  for _ in $(seq 100); do curl -sf -d '{}' "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done
}
