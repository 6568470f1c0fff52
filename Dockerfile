# Vigil: production image. Production dependencies only (the build needs no dev-only package and
# type-checks the app alone); migrations run on start. Build: docker build -t vigil .
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 PORT=3000
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
RUN node node_modules/next/dist/bin/next build
# The image is immutable: the start script neither installs nor rebuilds.
ENV VIGIL_SKIP_INSTALL=1 VIGIL_SKIP_BUILD=1
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "scripts/start.mjs"]
