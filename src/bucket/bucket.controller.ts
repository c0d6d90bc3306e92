import { Controller, Get, HttpCode, HttpStatus, Param, Post, Res, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Authenticated, Public, USER_ONLY } from '../common/policy.js';
import { BucketService } from './bucket.service.js';

@ApiBearerAuth()
@ApiTags('bucket')
@Controller('auth-api/bucket/userAvatars')
export class BucketController {
  constructor(private readonly bucket: BucketService) {}

  @Post('upload')
  @Authenticated({ principals: USER_ONLY, bucketToken: true })
  @HttpCode(HttpStatus.CREATED)
  @UseInterceptors(FileInterceptor('file'))
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } })
  @ApiOperation({ summary: 'Upload an avatar (PNG, JPEG, WebP, GIF) with an access token or the userBucketToken.' })
  async upload(@UploadedFile() file: Express.Multer.File | undefined) {
    const { accessKey, url } = await this.bucket.uploadAvatar(file?.buffer);
    return { status: 'OK', accessKey, url };
  }

  @Get('download/key/:accessKey')
  @Public()
  @ApiOperation({ summary: 'Download an avatar by its access key.' })
  async download(@Param('accessKey') accessKey: string, @Res() res: Response): Promise<void> {
    const object = await this.bucket.downloadAvatar(accessKey);
    res
      .set({
        'Content-Type': object.contentType,
        'Content-Length': String(object.data.length),
        'X-Content-Type-Options': 'nosniff',
        'Content-Security-Policy': "default-src 'none'",
        // Access keys are never reused, so the content never changes.
        'Cache-Control': 'public, max-age=31536000, immutable',
      })
      .end(object.data);
  }
}
